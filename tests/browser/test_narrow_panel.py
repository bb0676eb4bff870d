"""The placement graph in the side panel at its default width (about 250 px), checked on
the bounding boxes a learner sees in a real JupyterLab: the training step on 2 ps + 2
workers is drawn fitted to the panel's width, its zoom buttons sit in a row above it, a
clicked `gradients` opens where it was clicked, "Open in tab" shows the same graph big
in a main-area tab that follows the panel (or the cell output it was opened from), and
the follow picker names sessions by task and cell in words that fit. Screenshots go to
test-artifacts/narrow-*.png."""

import re

import pytest

from tests.browser.notebook_ui import (
    cell,
    run_beside_panel,
    run_cell,
    screenshot,
    show_tab,
    wait_until_idle,
)
from tests.browser.test_seeing import MODEL, STEP, graph_in, shown_ops

MORE_SESSIONS = """\
graph1, X1, y1, loss1, _, _ = model(1)
sess2 = tf.Session(cluster.target("worker", 0), graph=graph)
sess2.run(loss, feed_dict=data)
sess3 = tf.Session(cluster.target("worker", 1), graph=graph1)
sess3.run(loss1, feed_dict={X1: np.ones((4, 3)), y1: np.zeros((4, 1))})"""

CELLS = ["%load_ext dtfnb", "%%cluster\nps: 2\nworker: 2", MODEL, STEP, "PlacementView(sess)",
         MORE_SESSIONS]
STEP_CELL, VIEW_CELL, SESSIONS_CELL = 3, 4, 5
# The labels' font size in the graph's own units (extension/src/layout.ts, LABEL_PX).
LABEL_PX = 12
TABS = "#jp-main-dock-panel .lm-TabBar-tab"
TARGET = re.compile(r"^Placement: grpc://127\.0\.0\.1:\d+ run \d+$")


@pytest.fixture(scope="module")
def panel(lab, page):
    """The dtfnb panel at its default width beside narrow.ipynb, run up to PlacementView."""
    return run_beside_panel(lab, page, "narrow.ipynb", CELLS, VIEW_CELL)


def boxes(root, selector):
    """The bounding boxes (left, top, right, bottom) on the page of what `selector`
    matches under `root`, of the viewport of the graph holding it, and of the panel's
    body (which scrolls)."""
    return root.evaluate("""(root, selector) => {
        const box = node => {
            const r = node.getBoundingClientRect();
            return [r.left, r.top, r.right, r.bottom];
        };
        const body = root.closest('.dtfnb-body');
        return {
            found: [...root.querySelectorAll(selector)].map(box),
            viewport: box(root.closest('.dtfnb-placement').querySelector('.dtfnb-graph')),
            body: body ? box(body) : null,
        };
    }""", selector)


def overlap(a, b):
    """The width and height two boxes share (<= 0: they do not meet)."""
    return min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])


def on_screen(drawn):
    """What of the graph's viewport is on screen: the panel's body scrolls."""
    viewport, body = drawn["viewport"], drawn["body"]
    return [max(viewport[0], body[0]), max(viewport[1], body[1]),
            min(viewport[2], body[2]), min(viewport[3], body[3])]


def click(page, locator):
    """A user's click at the middle of what `locator` shows, scrolled into view first."""
    # (Playwright's own click waits for an SVG group to be "stable", which it never is.)
    locator.evaluate("node => node.scrollIntoView({block: 'center'})")
    box = locator.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def test_the_graph_fits_the_panel_width_with_its_buttons_above_it(panel, page):
    width = panel.bounding_box()["width"]
    assert 200 <= width <= 300, width     # the side panel's default width
    graph = graph_in(panel)
    drawn = boxes(graph, ".dtfnb-view")
    [view], viewport = drawn["found"], drawn["viewport"]
    assert viewport[0] - 1 <= view[0] and view[2] <= viewport[2] + 1, (view, viewport)
    # Labels shrink for the overview, to no less than 8 px; a name is whole on hover.
    assert float(graph.get_attribute("data-scale")) * LABEL_PX >= 8
    assert graph.locator('.dtfnb-op[data-name="dnn/MatMul"] title').text_content().startswith(
        "dnn/MatMul\n")
    buttons = boxes(graph, ".dtfnb-graph-toolbar button")["found"]
    nodes = boxes(graph, ".dtfnb-op, .dtfnb-folded, .dtfnb-scope-title")["found"]
    assert len(buttons) == 4 and nodes
    for button in buttons:
        assert button[3] <= viewport[1], (button, viewport)
        assert all(min(overlap(button, node)) <= 0 for node in nodes)
    screenshot(page, "narrow-panel")


def test_an_opened_scope_opens_where_it_was_clicked(panel, page):
    from playwright.sync_api import expect

    graph = graph_in(panel)
    click(page, graph.locator('.dtfnb-folded[data-scope="gradients"]'))
    opened = graph.locator('.dtfnb-scope[data-scope="gradients"]')
    expect(opened.locator(".dtfnb-op").first).to_be_attached()
    drawn = boxes(opened, ".dtfnb-scope-box, .dtfnb-scope-title text")
    scope, heading = drawn["found"][:2]
    visible = on_screen(drawn)
    assert min(overlap(scope, visible)) > 0, (scope, visible)
    # Its name, at its top left, is in view whole: the learner sees which scope opened.
    assert min(overlap(heading, visible)) >= min(heading[2] - heading[0], heading[3] - heading[1])
    screenshot(page, "narrow-gradients-open")
    # Folding it again (a click on its name) keeps the folded node in view.
    click(page, opened.locator(".dtfnb-scope-title").first)
    folded = graph.locator('.dtfnb-folded[data-scope="gradients"]')
    expect(folded).to_be_attached()
    drawn = boxes(folded, ":scope > .dtfnb-folded-box")
    [node], visible = drawn["found"], on_screen(drawn)
    assert min(overlap(node, visible)) > 0, (node, visible)


def tab(page, index):
    """The title of the placement tab opened `index`-th (from 1) and its graph, once drawn."""
    title = page.locator(TABS, has_text="Placement:").nth(index - 1)
    return title, graph_in(page.locator(".dtfnb-placement-tab").nth(index - 1))


def test_open_in_tab_shows_the_panel_graph_big_and_follows_the_panel(panel, page):
    from playwright.sync_api import expect

    graph = graph_in(panel)
    run = graph.locator(".dtfnb-run-step").text_content()
    panel.locator(".dtfnb-open-tab").click()
    title, big = tab(page, 1)
    expect(title).to_have_text(TARGET)
    expect(title).to_contain_text(run)
    assert shown_ops(big) == shown_ops(graph)
    assert float(big.get_attribute("data-scale")) * LABEL_PX >= 11
    assert big.bounding_box()["width"] > 2 * panel.bounding_box()["width"]
    screenshot(page, "narrow-tab")
    # A new step in the notebook: the panel shows it, and so does the tab.
    show_tab(page, "narrow.ipynb")
    run_cell(page, STEP_CELL)
    wait_until_idle(page, STEP_CELL)
    expect(graph.locator(".dtfnb-run-step")).not_to_have_text(run)
    newer = graph.locator(".dtfnb-run-step").text_content()
    expect(title).to_contain_text(newer)
    expect(big.locator(".dtfnb-run-step")).to_have_text(newer)


def test_open_in_tab_from_a_cell_output_shows_that_output(panel, page):
    from playwright.sync_api import expect

    show_tab(page, "narrow.ipynb")
    output = graph_in(cell(page, VIEW_CELL))
    run, ops = output.locator(".dtfnb-run").text_content(), shown_ops(output)
    output.locator(".dtfnb-open-tab").click()
    title, big = tab(page, 2)
    expect(title).to_have_text(TARGET)
    expect(big.locator(".dtfnb-run")).to_have_text(run)
    assert shown_ops(big) == ops
    assert float(big.get_attribute("data-scale")) * LABEL_PX >= 11
    # Its button again brings the same tab forward, not a third.
    show_tab(page, "narrow.ipynb")
    graph_in(cell(page, VIEW_CELL)).locator(".dtfnb-open-tab").click()
    expect(page.locator(TABS, has_text="Placement:")).to_have_count(2)
    expect(big).to_be_visible()


def test_the_follow_picker_names_sessions_by_task_and_cell_and_fits(panel, page):
    from playwright.sync_api import expect

    show_tab(page, "narrow.ipynb")
    run_cell(page, SESSIONS_CELL)
    wait_until_idle(page, SESSIONS_CELL)
    first = cell(page, 2).locator(".jp-InputArea-prompt").text_content().strip(" :")
    later = cell(page, SESSIONS_CELL).locator(".jp-InputArea-prompt").text_content().strip(" :")
    picker = panel.locator(".dtfnb-follow-select")
    expected = ["latest run", f"worker:0 · from {first}", f"worker:0 #2 · from {later}",
                f"worker:1 · from {later}"]
    expect(picker.locator("option")).to_have_count(len(expected))
    seen = picker.evaluate("""select => {
        const font = getComputedStyle(select);
        const measure = document.createElement('span');
        measure.style.font = font.font;
        measure.style.whiteSpace = 'pre';
        measure.style.position = 'absolute';
        document.body.appendChild(measure);
        const options = [...select.options].map(option => {
            measure.textContent = option.textContent;
            return {label: option.textContent, hint: option.title, width: measure.offsetWidth};
        });
        measure.remove();
        return {options, width: select.clientWidth, right: select.getBoundingClientRect().right};
    }""")
    assert sorted(o["label"] for o in seen["options"]) == sorted(expected)
    for option in seen["options"][1:]:
        assert re.match(r"grpc://127\.0\.0\.1:\d+ \(session ", option["hint"]), option
        # The whole label fits beside the select's arrow (about 24 px).
        assert option["width"] <= seen["width"] - 24, (option, seen["width"])
    assert seen["right"] <= panel.bounding_box()["x"] + panel.bounding_box()["width"]
    picker.select_option(label=f"worker:0 #2 · from {later}")
    expect(graph_in(panel).locator(".dtfnb-run-cell")).to_have_text(later)
    screenshot(page, "narrow-picker")
