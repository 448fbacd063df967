// A virtualised list of fixed-height rows: only the rows in view (plus a margin) exist
// in the DOM, so 10,000 results scroll as smoothly as 10.

import { h, perFrame } from "./dom.js";

const OVERSCAN = 8;

export class VirtualList {
  /**
   * @param {object} options
   * @param {number} options.rowHeight  pixel height of every row
   * @param {(item, index) => Element} options.render  builds one row
   * @param {(index) => void} [options.onOpen]  Enter / click on a row
   * @param {() => void} [options.onNearEnd]  scrolled within a screen of the end
   */
  constructor({ rowHeight, render, onOpen, onNearEnd }) {
    this.rowHeight = rowHeight;
    this.render = render;
    this.onOpen = onOpen;
    this.onNearEnd = onNearEnd;
    this.items = [];
    this.selected = -1;
    this.rows = new Map();
    this.spacer = h("div.vlist-spacer");
    this.el = h("div.vlist", { role: "listbox", tabindex: "-1" }, this.spacer);
    this.el.addEventListener(
      "scroll",
      perFrame(() => this.update()),
    );
    this.el.addEventListener("click", (event) => {
      const row = event.target.closest("[data-index]");
      if (!row || event.target.closest("a")) return;
      this.select(Number(row.dataset.index));
      if (this.onOpen) this.onOpen(this.selected);
    });
    new ResizeObserver(perFrame(() => this.update())).observe(this.el);
  }

  setItems(items, { keepScroll = false } = {}) {
    this.items = items;
    for (const row of this.rows.values()) row.remove();
    this.rows.clear();
    this.spacer.style.height = `${items.length * this.rowHeight}px`;
    if (!keepScroll) {
      this.el.scrollTop = 0;
      this.selected = items.length ? 0 : -1;
    } else if (this.selected >= items.length) {
      this.selected = items.length - 1;
    }
    this.update();
  }

  /** Render the rows in view; drop the others. */
  update() {
    const height = this.el.clientHeight || 600;
    const first = Math.max(0, Math.floor(this.el.scrollTop / this.rowHeight) - OVERSCAN);
    const last = Math.min(
      this.items.length,
      Math.ceil((this.el.scrollTop + height) / this.rowHeight) + OVERSCAN,
    );
    for (const [index, row] of this.rows) {
      if (index < first || index >= last) {
        row.remove();
        this.rows.delete(index);
      }
    }
    for (let index = first; index < last; index += 1) {
      let row = this.rows.get(index);
      if (!row) {
        row = this.render(this.items[index], index);
        row.dataset.index = String(index);
        row.setAttribute("role", "option");
        row.style.transform = `translateY(${index * this.rowHeight}px)`;
        row.style.height = `${this.rowHeight}px`;
        this.rows.set(index, row);
        this.el.append(row);
      }
      row.classList.toggle("selected", index === this.selected);
      row.setAttribute("aria-selected", String(index === this.selected));
    }
    const remaining = this.items.length * this.rowHeight - (this.el.scrollTop + height);
    if (this.onNearEnd && this.items.length && remaining < height) this.onNearEnd();
  }

  select(index) {
    if (!this.items.length) return;
    this.selected = Math.max(0, Math.min(this.items.length - 1, index));
    const top = this.selected * this.rowHeight;
    const view = this.el.clientHeight;
    if (top < this.el.scrollTop) this.el.scrollTop = top;
    else if (top + this.rowHeight > this.el.scrollTop + view) {
      this.el.scrollTop = top + this.rowHeight - view;
    }
    this.update();
  }

  move(delta) {
    this.select((this.selected < 0 ? 0 : this.selected) + delta);
  }

  /** How many rows exist in the DOM right now (the test checks it stays small). */
  get renderedRows() {
    return this.rows.size;
  }
}
