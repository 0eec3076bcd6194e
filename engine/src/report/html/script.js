'use strict';
// Filters the tables and opens or closes every fold. The page reads the same without it:
// the controls stay hidden until this runs.
(function () {
  function rowsOf(table) {
    return table.tBodies.length ? table.tBodies[0].rows : [];
  }
  document.querySelectorAll('[data-filter-for]').forEach(function (box) {
    var table = document.getElementById(box.getAttribute('data-filter-for'));
    if (!table) { return; }
    var input = box.querySelector('input');
    var select = box.querySelector('select');
    var count = box.querySelector('output');
    function apply() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var wanted = select ? select.value : '';
      var rows = rowsOf(table);
      var shown = 0;
      for (var i = 0; i < rows.length; i++) {
        var text = rows[i].textContent.toLowerCase();
        var keep = words.every(function (w) { return text.indexOf(w) >= 0; }) &&
          (!wanted || rows[i].getAttribute('data-class') === wanted);
        rows[i].hidden = !keep;
        if (keep) { shown++; }
      }
      count.textContent = shown + ' of ' + rows.length + ' rows shown';
    }
    input.addEventListener('input', apply);
    if (select) { select.addEventListener('change', apply); }
    box.hidden = false;
    apply();
  });
  document.querySelectorAll('button[data-open]').forEach(function (button) {
    var open = button.getAttribute('data-open') === 'true';
    button.addEventListener('click', function () {
      document.querySelectorAll('main details').forEach(function (d) { d.open = open; });
    });
    button.parentNode.hidden = false;
  });
})();
