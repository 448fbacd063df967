"""Measure the web explorer in a real browser: 10,000 listed results and a 5,000-message
conversation (docs/performance.md, "Web explorer").

Builds a home with two Claude Code transcripts (5,000 and 7,000 messages, every text
holding "zebra": 12,000 results), starts ``agentdex ui`` on it, drives Debian's chromium
with Playwright and measures inside the page (``performance.now()``, animation frames,
long tasks). Prints one JSON document; medians of ``--runs`` repetitions.

    python bench/bench_ui.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ui_support import (
    LONG_CHAT,
    browser_available,
    browser_context,
    build_big_home,
    launch_args,
    ui_server,
)

# Scrolls `el` by `px` per animation frame (0: to the bottom in `frames` frames, a
# scrollbar drag end to end); reports frame gaps, long tasks and how many elements exist.
SCROLL_SCRIPT = """
async ([selector, frames, px]) => {
  const el = document.querySelector(selector);
  const longTasks = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) longTasks.push(entry.duration);
  });
  observer.observe({ type: "longtask", buffered: false });
  const step = px || Math.max(1, (el.scrollHeight - el.clientHeight) / frames);
  const gaps = [];
  let last = performance.now();
  for (let i = 0; i < frames; i += 1) {
    el.scrollTop += step;
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  observer.disconnect();
  return { gaps, longTasks, dom: el.querySelectorAll("*").length };
}
"""

# Time from setting the hash (or typing) to the page's own "rendered" event.
WAIT_EVENT = """
async ([name, action]) => {
  const done = new Promise((resolve, reject) => {
    document.addEventListener(name, (e) => resolve(e.detail), { once: true });
    setTimeout(() => reject(new Error(`no ${name} within 120 s`)), 120000);
  });
  const t0 = performance.now();
  if (action.hash !== undefined) location.hash = action.hash;
  if (action.query !== undefined) {
    const input = document.getElementById("q");
    input.value = action.query;
    input.dispatchEvent(new Event("input"));
  }
  if (action.scrollEnd) {
    const list = document.getElementById("results");
    list.scrollTop = list.scrollHeight;
  }
  const detail = await done;
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return { ms: performance.now() - t0, detail };
}
"""

WHEEL_PX = 120  # a mouse wheel notch per frame: ~7,000 px/s, a fast flick

# The baseline a virtualised list avoids: every one of the loaded rows in the DOM at once.
ALL_ROWS_SCRIPT = """
() => {
  const list = window.agentdexResults;
  const t0 = performance.now();
  const box = document.createElement("div");
  box.style.cssText = "position: relative; height: 600px; overflow: auto";
  for (let i = 0; i < list.items.length; i += 1) {
    const row = list.render(list.items[i], i);
    row.style.transform = `translateY(${i * list.rowHeight}px)`;
    box.append(row);
  }
  document.body.append(box);
  box.getBoundingClientRect();
  const ms = performance.now() - t0;
  const elements = box.querySelectorAll("*").length;
  box.remove();
  return { ms, elements };
}
"""

KEY_SCRIPT = """
async (count) => {
  const times = [];
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "j", bubbles: true }));
    await new Promise((resolve) => requestAnimationFrame(resolve));
    times.push(performance.now() - t0);
  }
  return times;
}
"""


def _frames(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Frame gaps of every run pooled: median, 95th percentile, worst; long tasks per run."""
    gaps = sorted(g for run in runs for g in run["gaps"])
    return {
        "frame_ms_median": round(statistics.median(gaps), 1),
        "frame_ms_p95": round(gaps[int(len(gaps) * 0.95) - 1], 1),
        "frame_ms_max": round(gaps[-1], 1),
        "long_tasks_per_run": _median([len(run["longTasks"]) for run in runs]),
        "elements_in_list": max(run["dom"] for run in runs),
    }


def _progress(message: str) -> None:
    print(f"bench_ui: {message}", file=sys.stderr, flush=True)


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def measure(info: dict[str, Any], runs: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        page = browser_context(browser, info["token"], timeout=120_000).new_page()
        page.goto(f"{info['url']}/#/search")
        page.get_by_text("Recent conversations").wait_for()  # the first refresh is done

        first: list[float] = []
        more: list[float] = []
        keys: list[float] = []
        wheel: list[dict[str, Any]] = []
        drag: list[dict[str, Any]] = []
        for run in range(runs):
            _progress(f"results run {run}")
            query = "zebra" if run % 2 == 0 else "zebra message"
            page.evaluate("document.getElementById('q').value = ''")
            page.evaluate(WAIT_EVENT, ["agentdex:results", {"query": "x" * (run + 1)}])
            got = page.evaluate(WAIT_EVENT, ["agentdex:results", {"query": query}])
            first.append(got["ms"])
            _progress(f"first page {got['ms']:.0f} ms")
            loaded = page.evaluate(WAIT_EVENT, ["agentdex:more", {"scrollEnd": True}])
            assert loaded["detail"]["loaded"] == 10_000, loaded
            more.append(loaded["ms"])
            page.evaluate("document.getElementById('results').scrollTop = 0")
            wheel.append(page.evaluate(SCROLL_SCRIPT, ["#results", 200, WHEEL_PX]))
            drag.append(page.evaluate(SCROLL_SCRIPT, ["#results", 240, 0]))
            page.locator("#q").press("Escape")
            keys.extend(page.evaluate(KEY_SCRIPT, 50))
        baseline = page.evaluate(ALL_ROWS_SCRIPT)
        out["results"] = {
            "listed": 10_000,
            "matching": 12_000,
            "first_page_ms": _median(first),
            "load_10000_ms": _median(more),
            "key_j_to_next_frame_ms": _median(keys),
            "rows_in_dom": page.locator("#results .result").count(),
            "baseline_all_10000_rows_ms": round(baseline["ms"], 1),
            "baseline_all_10000_rows_elements": baseline["elements"],
            "wheel_scroll": _frames(wheel),
            "drag_end_to_end": _frames(drag),
        }

        opened: list[float] = []
        ends: list[float] = []
        conv_wheel: list[dict[str, Any]] = []
        conv_drag: list[dict[str, Any]] = []
        for run in range(runs):
            _progress(f"conversation run {run}")
            page.evaluate("location.hash = '#/search'")
            page.wait_for_selector("#q")
            got = page.evaluate(WAIT_EVENT, ["agentdex:conversation", {"hash": f"#/c/{LONG_CHAT}"}])
            opened.append(got["ms"])
            t0 = time.perf_counter()
            page.locator("button", has_text="End").click()
            page.locator("#messages article", has_text="zebra message 4999 ").wait_for()
            ends.append((time.perf_counter() - t0) * 1000)
            page.evaluate("document.getElementById('main').scrollTop = 0")
            conv_wheel.append(page.evaluate(SCROLL_SCRIPT, ["#main", 200, WHEEL_PX]))
            page.locator("button", has_text="Top").click()
            conv_drag.append(page.evaluate(SCROLL_SCRIPT, ["#main", 240, 0]))
        out["conversation"] = {
            "messages": 5000,
            "open_ms": _median(opened),
            "jump_to_end_ms": _median(ends),
            "messages_in_dom": page.locator("#messages article").count(),
            "wheel_scroll": _frames(conv_wheel),
            "drag_end_to_end": _frames(conv_drag),
        }
        heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : null")
        out["js_heap_mb"] = round(heap / 2**20, 1) if heap else None
        browser.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    reason = browser_available()
    if reason:
        print(json.dumps({"skipped": reason}))
        return 0
    with tempfile.TemporaryDirectory(prefix="agentdex-bench-ui-") as tmp:
        home = Path(tmp) / "home"
        workspace = build_big_home(home)
        with ui_server(home, Path(tmp) / "data", workspace) as info:
            started = time.perf_counter()
            result = measure(info, args.runs)
            result["runs"] = args.runs
            result["load_average_1min"] = round(os.getloadavg()[0], 1)
            result["cpus"] = os.cpu_count()
            result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
