"""The README states how many cases the differential tier has; it must say the truth."""

import re
from pathlib import Path

from test_differential import CASES


def test_the_readme_states_the_tier_case_count():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    stated = re.search(r"differential\s+tier\s+has\s+(\d[\d,]*)\s+cases", readme)
    assert stated, "README: say 'the differential tier has N cases'"
    assert int(stated.group(1).replace(",", "")) == len(CASES), \
        f"README says {stated.group(1)} cases, the tier has {len(CASES)}"
