// The layout report of one page at phone width (tests/test_phone.py runs it after each load):
// what scrolls the page sideways, what is cut off, which wide box lacks its scroll hint, which
// figure is drawn too small to read; and the page's links, for the crawl.
async ({ SCROLLERS, SLACK, HINTS }) => {
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const root = document.documentElement, width = root.clientWidth, problems = [];
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const scrolls = el => SCROLLERS.includes(getComputedStyle(el).overflowX);
  if (root.scrollWidth > width) problems.push(`page scrolls sideways: ${root.scrollWidth} > ${width}`);
  for (const el of document.body.querySelectorAll("*")) {
    if (!(el instanceof HTMLElement) || el.matches("input, textarea, select")) continue;
    if (getComputedStyle(el).display === "none" || el.scrollWidth <= el.clientWidth + 1) continue;
    // Screen-reader-only text (.sr-only, .visually-hidden) is clipped to nothing on purpose.
    if (getComputedStyle(el).clip === "rect(0px, 0px, 0px, 0px)") continue;
    if (scrolls(el)) continue;
    // Content spilling out of a box that does not scroll: fine only inside a box that does.
    let up = el.parentElement;
    while (up && up !== document.body && getComputedStyle(up).overflowX === "visible") up = up.parentElement;
    const overflow = getComputedStyle(el).overflowX;
    if (overflow !== "visible" || !up || up === document.body || !scrolls(up))
      problems.push(`${name(el)} is cut off or spills (overflow-x ${overflow}): ${el.scrollWidth} > ${el.clientWidth}`);
  }
  for (const box of document.querySelectorAll(".math, .table-wrap, pre, figure.plot")) {
    if (getComputedStyle(box).display === "none") continue;
    const extra = box.scrollWidth - box.clientWidth;  // hidden width, 0 when it fits
    const after = getComputedStyle(box, "::after").content, hint = HINTS[root.lang];
    if (extra > 0 && !scrolls(box)) problems.push(`${name(box)} is wider than its space and does not scroll`);
    if (extra > SLACK && after !== JSON.stringify(hint)) problems.push(`${name(box)} scrolls without the hint (${after})`);
    if (extra <= 0 && after !== "none") problems.push(`${name(box)} fits but shows a hint (${after})`);
    const r = box.getBoundingClientRect();
    if (r.left < 0 || r.right > width + 0.5) problems.push(`${name(box)} reaches past the screen: ${r.left}..${r.right}`);
  }
  for (const caption of document.querySelectorAll("caption, figcaption")) {
    const r = caption.getBoundingClientRect();  // text that scrolls away with its table
    if (r.width && r.right > width + 0.5) problems.push(`${name(caption)} runs off the screen`);
  }
  for (const img of document.querySelectorAll("figure.plot img")) {
    const drawn = img.getBoundingClientRect().width, points = Number(img.dataset.points);
    if (drawn < points - 1) problems.push(`figure ${img.closest("figure").dataset.figure} drawn ${drawn}px for ${points}pt: text too small`);
  }
  const links = [...document.querySelectorAll("a[href]")].map(a => a.href);
  return {problems, links, figures: document.querySelectorAll("figure.plot img").length,
          hints: document.querySelectorAll(".overflows").length};
}
