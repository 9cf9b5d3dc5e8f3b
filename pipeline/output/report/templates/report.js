document.querySelectorAll("table.sortable").forEach(function (t) {
  t.querySelectorAll("th").forEach(function (th, i) {
    th.addEventListener("click", function () {
      var dir = th.dataset.dir === "asc" ? "desc" : "asc";
      t.querySelectorAll("th").forEach(function (h) { delete h.dataset.dir; });
      th.dataset.dir = dir;
      var key = function (r) { var c = r.cells[i]; return c ? (c.dataset.sort || c.textContent.trim()) : ""; };
      var rows = Array.from(t.tBodies[0].rows).sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny) && isFinite(x) && isFinite(y)) ? nx - ny : x.localeCompare(y);
        return dir === "asc" ? c : -c;
      });
      rows.forEach(function (r) { t.tBodies[0].appendChild(r); });
    });
  });
});
document.querySelectorAll("input.filter").forEach(function (box) {
  box.addEventListener("input", function () {
    var q = box.value.toLowerCase();
    Array.from(document.getElementById(box.dataset.table).tBodies[0].rows).forEach(function (r) {
      r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0;
    });
  });
});
