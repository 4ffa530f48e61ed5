// Filters and cross-highlighting for a contextasm HTML view. It reads only
// the page's own elements and data attributes, and loads nothing.
(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.block"));
  var boxes = Array.prototype.slice.call(document.querySelectorAll("input[name=status]"));
  var reason = document.getElementById("filter-reason");
  var find = document.getElementById("filter-find");
  var shown = document.getElementById("shown");

  function linked(row) {
    return document.querySelectorAll('[data-row="' + row.id + '"]');
  }

  function apply() {
    var on = {};
    boxes.forEach(function (b) { on[b.value] = b.checked; });
    var r = reason.value;
    var q = find.value.trim().toLowerCase();
    var n = 0;
    rows.forEach(function (row) {
      var ok = on[row.dataset.status] === true &&
        (r === "" || (" " + row.dataset.reasons + " ").indexOf(" " + r + " ") >= 0) &&
        (q === "" || row.dataset.id.toLowerCase().indexOf(q) >= 0);
      row.hidden = !ok;
      linked(row).forEach(function (el) { el.classList.toggle("off", !ok); });
      if (ok) { n++; }
    });
    document.querySelectorAll("tbody").forEach(function (tb) {
      var none = tb.querySelector("tr.none");
      if (none) { none.hidden = tb.querySelector("tr.block:not([hidden])") !== null; }
    });
    shown.textContent = n === rows.length ? rows.length + " blocks" : "showing " + n + " of " + rows.length + " blocks";
    document.body.dataset.shown = String(n);
  }

  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  reason.addEventListener("change", apply);
  find.addEventListener("input", apply);

  // Hovering a row, a bar segment or a span of text lights up the others.
  function hot(id, on) {
    var row = document.getElementById(id);
    if (row) { row.classList.toggle("hot", on); }
    document.querySelectorAll('[data-row="' + id + '"]').forEach(function (el) { el.classList.toggle("hot", on); });
  }
  rows.forEach(function (row) {
    row.addEventListener("mouseenter", function () { hot(row.id, true); });
    row.addEventListener("mouseleave", function () { hot(row.id, false); });
  });
  document.querySelectorAll("[data-row]").forEach(function (el) {
    el.addEventListener("mouseenter", function () { hot(el.dataset.row, true); });
    el.addEventListener("mouseleave", function () { hot(el.dataset.row, false); });
  });

  apply();
  document.body.dataset.ready = "true";
})();
