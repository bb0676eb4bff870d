/** A new element with a class. */
export function element(tag: string, className: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  return node;
}

/** A new element with a class and text. */
export function text(tag: string, className: string, content: string): HTMLElement {
  const node = element(tag, className);
  node.textContent = content;
  return node;
}
