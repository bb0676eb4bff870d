"""Every conclusion a saved tutorial states was written from the table it shows: rewritten
from that table's data now, each sentence comes out the same."""

import json
import pathlib

import pytest

from dtfnb.notebook.experiment import Conclusion, Result

NOTEBOOKS = sorted((pathlib.Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


def shown(notebook):
    """The Results (by id) and the conclusion claims a notebook's outputs carry."""
    results, claims = {}, []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", ()):
            meta = output.get("metadata", {}).get("dtfnb", {})
            if "result" in meta:
                result = Result.from_metadata(meta["result"])
                results[result.id] = result
            claims.extend(meta.get("conclusions", ()))
    return results, claims


def check_conclusions(notebook):
    """Asserts each claim's sentence is what its displayed Result says; returns the count."""
    results, claims = shown(notebook)
    for claim in claims:
        assert claim["result"] in results, f"{claim['text']!r} cites a table the notebook " \
            "does not show"
        assert Conclusion.recheck(claim, results[claim["result"]]) == claim["text"]
    return len(claims)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_saved_conclusions_follow_their_tables(path):
    check_conclusions(json.loads(path.read_text()))
