// attnlab web lesson: mark every box that is wider than its space (it scrolls inside itself),
// so style.css can show a fade and a "← scroll →" line; the mark goes when the box fits. A box
// that scrolls is made reachable by keyboard (see reachable).
(function () {
  "use strict";
  var BOXES = ".math, .table-wrap, pre, figure.plot";
  var SLACK = 8;  // px; tests/test_phone.py uses the same
  var hint = document.body.getAttribute("data-scroll-hint") || "← →";
  var swipe = document.body.getAttribute("data-swipe-hint") || hint;  // on a touch screen
  var label = document.body.getAttribute("data-scroll-label") || "";
  var queued = false;
  // A box that scrolls at all (even by a pixel) can be scrolled from the keyboard: it takes
  // the focus (Tab, then the arrow keys) as a named group, unless it already holds something
  // focusable or the page gave it its own tabindex. data-scroll-focus marks what was added here.
  function reachable(box, scrolls) {
    var added = box.hasAttribute("data-scroll-focus");
    if (scrolls && !added && !box.hasAttribute("tabindex") &&
        !box.querySelector("a[href], button, input, select, textarea, [tabindex]")) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("data-scroll-focus", "");
      if (!box.hasAttribute("role")) { box.setAttribute("role", "group"); box.setAttribute("data-scroll-role", ""); }
      if (!box.hasAttribute("aria-label")) { box.setAttribute("aria-label", label); box.setAttribute("data-scroll-name", ""); }
    } else if (!scrolls && added) {
      box.removeAttribute("tabindex");
      box.removeAttribute("data-scroll-focus");
      if (box.hasAttribute("data-scroll-role")) { box.removeAttribute("role"); box.removeAttribute("data-scroll-role"); }
      if (box.hasAttribute("data-scroll-name")) { box.removeAttribute("aria-label"); box.removeAttribute("data-scroll-name"); }
    }
  }
  function mark() {
    queued = false;
    document.querySelectorAll(BOXES).forEach(function (box) {
      // A few pixels past the edge still show inside the padding (and adding the hint line
      // can shift them): SLACK keeps the mark from flickering on such a box.
      var overflows = box.scrollWidth > box.clientWidth + SLACK;
      box.classList.toggle("overflows", overflows);
      if (overflows) { box.setAttribute("data-scroll-hint", hint); box.setAttribute("data-swipe-hint", swipe); }
      reachable(box, box.scrollWidth > box.clientWidth);
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
