"""The placement renderer as a cell output in a real JupyterLab: a notebook displays
IRunPlacement data (tests/browser/placements.py, made from real dtfnb graphs) as the
`application/vnd.dtfnb.placement+json` MIME type, and the labextension draws it as a
graph: ops in the colours the data gives their devices, gradients folded until
clicked, each cross-device edge a Send/Recv pair with its bytes, a list of the pairs,
and a view that survives an update of the display. The time a training step of the MLP
on 2 ps and 3 workers (193 ops) and on 2 ps and 8 workers (448 ops) takes to draw is
written to test-artifacts/placement-render.json."""

import inspect
import json
import re
from functools import partial

import pytest

from tests.browser.conftest import ARTIFACTS
from tests.browser.notebook_ui import (
    open_notebook,
    run_beside_panel,
    run_cell,
    screenshot,
    wait_for_kernel,
)
from tests.browser.placements import PLACEMENT_MIME, linear_regression, mlp, placement_of

SHOW = f"""\
import json
from IPython.display import display

def placement(name, **run):
    with open(name) as f:
        data = json.load(f)
    data["run"].update(run)
    return {{"{PLACEMENT_MIME}": data, "text/plain": f"placement of step {{data['run']['step']}}"}}
"""
CELLS = [
    SHOW + 'handle = display(placement("linear.json", number=1, cell=5, '
           'target="grpc://127.0.0.1:2222"), raw=True, display_id=True)',
    'handle.update(placement("linear.json", step=2, number=2, cell=6), raw=True)',
    'display(placement("mlp3.json"), raw=True)',
    'display(placement("mlp8.json"), raw=True)',
]
FIXTURES = {"linear.json": (linear_regression, 1), "mlp3.json": (partial(mlp, 3), 3),
            "mlp8.json": (partial(mlp, 8), 8)}


def output(page, index):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").nth(index).locator(
        ".dtfnb-placement-output .dtfnb-placement")


@pytest.fixture(scope="module")
def placements(lab, page):
    """The fixtures' data by file name, written beside placements.ipynb, which is open."""
    data = {name: placement_of(*fixture) for name, fixture in FIXTURES.items()}
    for name, placement in data.items():
        (lab.root / name).write_text(json.dumps(placement))
    open_notebook(lab, page, "placements.ipynb", CELLS)
    # A cell run before the kernel is up does not run.
    wait_for_kernel(page)
    return data


def drawn(page, index):
    """What output `index` shows once drawn: ops by name (device, fill), legend colours,
    the smallest label size on screen, the transfer list and the header."""
    from playwright.sync_api import expect

    graph = output(page, index)
    expect(graph).to_have_attribute("data-render-ms", re.compile(r"^\d"), timeout=60_000)
    return graph.evaluate("""root => {
        const ops = {};
        for (const op of root.querySelectorAll('.dtfnb-op')) {
            ops[op.dataset.name] = [op.dataset.device,
                                    op.querySelector('.dtfnb-op-box').getAttribute('fill')];
        }
        const legend = {};
        for (const item of root.querySelectorAll('.dtfnb-legend-item')) {
            legend[item.dataset.device] = getComputedStyle(item.querySelector('.dtfnb-swatch'))
                .backgroundColor;
        }
        const scale = Number(root.dataset.scale);
        const sizes = [...root.querySelectorAll('.dtfnb-svg text')].map(
            t => parseFloat(getComputedStyle(t).fontSize) * scale);
        return {
            ops, legend, smallest: Math.min(...sizes),
            transfers: [...root.querySelectorAll('.dtfnb-transfer')].map(li => li.textContent),
            pairs: root.querySelectorAll('.dtfnb-edge.dtfnb-mod-transfer').length,
            sends: root.querySelectorAll('.dtfnb-send').length,
            header: root.querySelector('.dtfnb-run').textContent,
            ms: Number(root.dataset.renderMs),
            items: Number(root.dataset.items),
        };
    }""")


def rgb(colour):
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


def test_a_placement_output_is_drawn_as_a_graph(placements, page):
    from playwright.sync_api import expect

    run_cell(page, 0)
    data = placements["linear.json"]
    seen = drawn(page, 0)
    colours = {device["name"]: device["colour"] for device in data["devices"]}
    # Every op shown wears the colour the kernel sent for its device, as does the legend.
    assert seen["ops"]
    devices = {node["name"]: node["device"] for node in data["nodes"]}
    for name, (device, fill) in seen["ops"].items():
        assert device == devices[name], name
        assert fill == colours[device], name
    assert seen["legend"] == {name: rgb(colour) for name, colour in colours.items()}
    # The forward pass is open, the gradients and the optimizer are folded; X was fed, so
    # its placeholder did not run.
    assert {"dnn/MatMul", "dnn/w", "dnn/w/read", "loss"} <= set(seen["ops"])
    assert "X" not in seen["ops"]
    assert not any(name.startswith("gradients/") for name in seen["ops"])
    graph = output(page, 0)
    expect(graph.locator('.dtfnb-folded[data-scope="gradients"]')).to_be_visible()
    expect(graph.locator('.dtfnb-folded[data-scope="GradientDescent"]')).to_be_visible()
    assert seen["smallest"] >= 11
    # Each cross-device tensor is listed, and drawn as a Send/Recv pair.
    assert len(seen["transfers"]) == len(data["transfers"])
    assert "dnn/w/read (ps:0 CPU:0) \u2192 dnn/MatMul (worker:0 CPU:0), 12 B" in seen["transfers"]
    assert seen["pairs"] >= 2 and seen["sends"] == seen["pairs"]
    assert "run 1" in seen["header"] and "[5]" in seen["header"]
    assert "grpc://127.0.0.1:2222" in seen["header"] and "ok" in seen["header"]
    screenshot(page, "placement-output")


def test_a_folded_scope_opens_on_click_and_stays_open_across_updates(placements, page):
    from playwright.sync_api import expect

    graph = output(page, 0)
    # Dispatched: Playwright's click waits for an SVG group to be "stable", which it never is.
    graph.locator('.dtfnb-folded[data-scope="gradients"]').dispatch_event("click")
    gradients = graph.locator('.dtfnb-scope[data-scope="gradients"]')
    expect(gradients).to_be_visible()
    expect(gradients.locator(".dtfnb-op").first).to_be_visible()
    screenshot(page, "placement-output-gradients-open")
    # A display update redraws the same view of the new run.
    run_cell(page, 1)
    expect(graph.locator(".dtfnb-run")).to_contain_text("run 2", timeout=30_000)
    expect(graph.locator(".dtfnb-run")).to_contain_text("[6]")
    expect(gradients).to_be_visible()
    # Its title folds it again.
    gradients.locator(".dtfnb-scope-title").first.dispatch_event("click")
    expect(graph.locator('.dtfnb-folded[data-scope="gradients"]')).to_be_visible()


@pytest.mark.parametrize("index, name", [(2, "mlp3.json"), (3, "mlp8.json")])
def test_time_to_draw_a_training_step_of_the_mlp(placements, page, index, name):
    """A measurement, not an assertion of speed: the default view, then every scope open."""
    run_cell(page, index)
    seen = drawn(page, index)
    assert seen["ms"] > 0
    graph = output(page, index)
    graph.scroll_into_view_if_needed()
    screenshot(page, f"placement-{name[:-5]}")
    # Open every folded node until none is left; each click draws the graph again.
    opened = graph.evaluate("""async root => {
        const drawn = () => new Promise(done => {
            const watch = new MutationObserver(() => { watch.disconnect(); done(); });
            watch.observe(root, {attributes: true, attributeFilter: ['data-render-ms']});
        });
        let clicks = 0;
        for (let folded; (folded = root.querySelector('.dtfnb-folded')); clicks++) {
            const next = drawn();
            folded.dispatchEvent(new MouseEvent('click', {bubbles: true}));
            await next;
        }
        return {clicks, ms: Number(root.dataset.renderMs), items: Number(root.dataset.items)};
    }""")
    assert not graph.locator(".dtfnb-folded").count()
    nodes = len(placements[name]["nodes"])
    assert graph.locator(".dtfnb-op").count() == nodes
    report = ARTIFACTS / "placement-render.json"
    results = json.loads(report.read_text()) if report.exists() else {}
    results[name] = {"nodes": nodes, "transfers": len(placements[name]["transfers"]),
                     "default_view": {"items": seen["items"], "render_ms": seen["ms"]},
                     "all_open": {"items": opened["items"], "render_ms": opened["ms"]}}
    report.write_text(json.dumps(results, indent=2))
    print(name, results[name])


def test_a_training_step_of_the_mlp_opens_in_a_tab_at_full_size(placements, page):
    from playwright.sync_api import expect

    output(page, 2).locator(".dtfnb-open-tab").click()
    title = page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="Placement:")
    expect(title).to_have_text(re.compile(r"Placement: grpc://127\.0\.0\.1:\d+ run 2"))
    graph = page.locator(".dtfnb-placement-tab .dtfnb-placement")
    expect(graph).to_have_attribute("data-render-ms", re.compile(r"^\d"), timeout=60_000)
    # The tab draws the output's data in its own view: folded as at first, labels >= 11 px.
    expect(graph.locator(".dtfnb-folded").first).to_be_visible()
    assert float(graph.get_attribute("data-scale")) * 12 >= 11
    fits = graph.evaluate("""root => {
        const view = root.querySelector('.dtfnb-view').getBoundingClientRect();
        const viewport = root.querySelector('.dtfnb-graph').getBoundingClientRect();
        return view.left >= viewport.left - 1 && view.right <= viewport.right + 1;
    }""")
    assert fits
    screenshot(page, "placement-tab-mlp3")


PANEL_CELLS = [
    "%load_ext dtfnb",
    "%%cluster --name big\nps: 2\nworker: 3",
    "import numpy as np\nimport dtfnb as tf\n\nBATCH = 50\n\n\n" + inspect.getsource(mlp) + """
graph, fetches, feeds = mlp(3)
with graph.as_default():
    init = tf.global_variables_initializer()
sess = tf.Session(big.target("worker", 0), graph=graph)
sess.run(init)
rng = np.random.RandomState(0)
feed = {}
for name, shape in feeds.items():
    tensor = graph.get_tensor_by_name(name)
    feed[tensor] = (rng.rand(*shape) * 10).astype(tensor.dtype.as_numpy_dtype)
sess.run(fetches, feed)""",
]


def test_time_to_draw_a_real_training_step_in_the_panel(lab, page):
    """The MLP's training step run on 2 ps + 3 workers, as the panel draws it: a
    measurement, written to test-artifacts/placement-render.json, not an assertion."""
    from playwright.sync_api import expect

    panel = run_beside_panel(lab, page, "panel_render.ipynb", PANEL_CELLS, len(PANEL_CELLS) - 1)
    graph = panel.locator(".dtfnb-placement")
    expect(graph.locator(".dtfnb-run-cell")).to_have_text("[3]", timeout=60_000)
    expect(graph).to_have_attribute("data-render-ms", re.compile(r"^\d"))
    ops = graph.evaluate("root => root.querySelectorAll('.dtfnb-op').length")
    default = {"items": int(graph.get_attribute("data-items")),
               "render_ms": float(graph.get_attribute("data-render-ms"))}
    screenshot(page, "panel-render-mlp")
    nodes = page.evaluate("""() => [...document.querySelectorAll(
        '#dtfnb-panel .dtfnb-legend-item .dtfnb-count')].map(c => parseInt(c.textContent))""")
    report = ARTIFACTS / "placement-render.json"
    results = json.loads(report.read_text()) if report.exists() else {}
    results["panel, MLP step on 2 ps + 3 workers"] = {
        "nodes": sum(nodes), "ops drawn unfolded": ops, "default_view": default}
    report.write_text(json.dumps(results, indent=2))
    assert sum(nodes) > 150 and default["render_ms"] > 0
