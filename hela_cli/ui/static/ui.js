// hela ui: the only script. Shows a graph node's scores in the caption when it is hovered or focused
// (the <title> tooltip does not appear on keyboard focus), and highlights its row in the result table.
(function () {
  "use strict";
  var detail = document.getElementById("graph-detail");
  if (!detail) return;
  function show(node) {
    detail.textContent = node.getAttribute("data-detail");
    var id = node.getAttribute("data-id");
    document.querySelectorAll("tr.highlight").forEach(function (tr) { tr.classList.remove("highlight"); });
    var row = document.querySelector('tr[data-id="' + id + '"]');
    if (row) row.classList.add("highlight");
  }
  document.querySelectorAll("svg.graph a.node").forEach(function (node) {
    node.addEventListener("focus", function () { show(node); });
    node.addEventListener("mouseenter", function () { show(node); });
  });
})();
