// attnlab web lesson: mark every box that is wider than its space (it scrolls inside itself),
// so style.css can show a fade and a "← scroll →" line; the mark goes when the box fits.
(function () {
  "use strict";
  var BOXES = ".math, .table-wrap, pre, figure.plot";
  var SLACK = 8;  // px; tests/test_phone.py uses the same
  var hint = document.body.getAttribute("data-scroll-hint") || "← →";
  var queued = false;
  function mark() {
    queued = false;
    document.querySelectorAll(BOXES).forEach(function (box) {
      // A few pixels past the edge still show inside the padding (and adding the hint line
      // can shift them): SLACK keeps the mark from flickering on such a box.
      var overflows = box.scrollWidth > box.clientWidth + SLACK;
      box.classList.toggle("overflows", overflows);
      if (overflows) box.setAttribute("data-scroll-hint", hint);
    });
  }
  function later() {
    if (!queued) { queued = true; requestAnimationFrame(mark); }
  }
  mark();
  window.addEventListener("resize", later);
  window.addEventListener("load", later);  // figures and late fonts change widths
  if (document.fonts) document.fonts.ready.then(later);
  // Pages that replace their content (the explorer's stages) get their new boxes marked too.
  new MutationObserver(later).observe(document.body, { childList: true, subtree: true });
})();
