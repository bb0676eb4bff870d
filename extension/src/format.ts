/** Short readable numbers for the panel and the graph. */

/** 12 -> "12 B", 1234 -> "1.2 KB", 5e6 -> "5.0 MB" (powers of 1000). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** 1 -> "1 step", 2 -> "2 steps". */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
