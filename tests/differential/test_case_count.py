"""The docs state how many cases the differential tier has; they must say the truth."""

import re
from pathlib import Path

from test_differential import CASES

ROOT = Path(__file__).parents[2]


def test_the_docs_state_the_tier_case_count():
    stated = [(str(page.relative_to(ROOT)), int(count.replace(",", "")))
              for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
              for count in re.findall(r"differential\s+tier\s+has\s+(\d[\d,]*)\s+cases",
                                      page.read_text())]
    assert stated, "docs/differences.md: say 'the differential tier has N cases'"
    wrong = [(page, count) for page, count in stated if count != len(CASES)]
    assert not wrong, f"the tier has {len(CASES)} cases; these pages say otherwise: {wrong}"
