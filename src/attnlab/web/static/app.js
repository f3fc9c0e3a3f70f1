// attnlab web lesson: small enhancements only. Every page works without this file.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var token = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  // Copy buttons on code blocks.
  document.querySelectorAll("figure.code").forEach(function (fig) {
    var button = fig.querySelector("button.copy");
    var pre = fig.querySelector("pre");
    if (!button || !pre || !navigator.clipboard) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(pre.innerText).then(function () {
        var label = button.textContent;
        button.textContent = button.dataset.copied;
        setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
  });

  // Lesson page: the language switch and the table of contents follow the section in view.
  var switcher = document.getElementById("lang-switch");
  var sections = document.querySelectorAll("body.page-lesson article.section");
  if (sections.length && "IntersectionObserver" in window) {
    var links = {};
    document.querySelectorAll(".toc a").forEach(function (a) { links[a.getAttribute("href")] = a; });
    // A learner who arrived at #s-N (or clicked a contents link) and has not scrolled since is
    // on that section, whatever late layout shifts put in view; scrolling hands over to the
    // observer.
    var followHash = !!location.hash;
    var follow = function (hash) {
      if (switcher) switcher.href = switcher.href.split("#")[0] + hash;
      Object.keys(links).forEach(function (k) { links[k].classList.toggle("active", k === hash); });
    };
    var release = function () { followHash = false; };
    ["wheel", "touchmove", "keydown"].forEach(function (ev) {
      window.addEventListener(ev, release, { passive: true });
    });
    window.addEventListener("hashchange", function () { followHash = true; follow(location.hash); });
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (e.isIntersecting && !followHash) follow("#" + e.target.id);
      });
    }, { rootMargin: "-30% 0px -60% 0px" });
    sections.forEach(function (s) { observer.observe(s); });
    if (location.hash) follow(location.hash);
  }

  // Knowledge checks: post an answer, an exercise or a self-assessment in place and swap in the
  // check as saved, so the learner stays where they were (without this, the form's 303 returns
  // to /lesson#s-N or /section/N#check-N). Any failure falls back to the plain form post.
  var checkPage = document.body.classList.contains("page-lesson") ? "lesson" : "section";
  var pageLang = document.documentElement.lang === "en" ? "en" : "zh";
  function wireCheck(check) {
    check.querySelectorAll("form:not(.complete)").forEach(function (f) {
      f.addEventListener("submit", function (e) {
        e.preventDefault();
        var x = window.scrollX, y = window.scrollY;
        var id = check.id.replace("check-", "");
        var url = "/section/" + id + "/check?page=" + checkPage + "&lang=" + pageLang;
        fetch(f.action, { method: "POST", body: new FormData(f), credentials: "same-origin", redirect: "manual" })
          .then(function (r) {
            if (r.type !== "opaqueredirect") throw new Error("not saved");
            return fetch(url, { credentials: "same-origin" });
          })
          .then(function (r) { if (!r.ok) throw new Error("no check"); return r.text(); })
          .then(function (html) {
            var box = document.createElement("div");
            box.innerHTML = html;
            var fresh = box.querySelector("section.check");
            if (!fresh) throw new Error("no check");
            check.replaceWith(fresh);
            wireCheck(fresh);
            window.scrollTo(x, y);
          })
          .catch(function () { f.submit(); });
      });
    });
  }
  document.querySelectorAll("section.check").forEach(wireCheck);

  // Explorer: recompute as the learner types.
  var form = document.getElementById("explorer-form");
  if (!form) return;
  var sizeForm = document.getElementById("size-form");
  sizeForm.querySelectorAll("select").forEach(function (s) {
    s.addEventListener("change", function () { sizeForm.submit(); });
  });
  var NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;
  function value(input) { return NUMBER.test(input.value) ? Number(input.value) : input.value; }
  function matrix(name, rows, cols, prefix) {
    var out = [];
    for (var i = 0; i < rows; i++) {
      var row = [];
      for (var j = 0; j < cols; j++) row.push(value(form.querySelector('[data-cell="' + prefix + "[" + i + "][" + j + ']"]')));
      out.push(row);
    }
    return out;
  }
  function payload() {
    var T = +form.T.value, C = +form.C.value, d = +form.d.value;
    var x = [];
    for (var b = 0; b < 2; b++) x.push(matrix("x", T, C, "x[" + b + "]"));
    return { x: x, w_q: matrix("w_q", C, d, "w_q"), w_k: matrix("w_k", C, d, "w_k"), w_v: matrix("w_v", C, d, "w_v") };
  }
  var errorBox = document.getElementById("explorer-error");
  var stages = document.getElementById("stages");
  var pending = null, seq = 0;
  function clearMarks() {
    form.querySelectorAll(".invalid").forEach(function (el) { el.classList.remove("invalid"); el.removeAttribute("aria-invalid"); el.title = ""; });
    form.querySelectorAll(".has-error").forEach(function (el) { el.classList.remove("has-error"); });
  }
  function update() {
    var mine = ++seq;
    var lang = document.documentElement.lang === "en" ? "en" : "zh";
    fetch("/api/explorer?lang=" + lang, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
      body: JSON.stringify(payload())
    }).then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .then(function (res) {
        if (mine !== seq) return;  // a newer edit is on its way
        clearMarks();
        if (res.ok) {
          errorBox.hidden = true;
          stages.innerHTML = res.body.html;
          stages.classList.remove("stale");
          return;
        }
        errorBox.hidden = false;
        errorBox.textContent = res.body.error;
        stages.classList.add("stale");
        var cell = res.body.cell && form.querySelector('[data-cell="' + res.body.cell + '"]');
        if (cell && res.body.cell.split("[").length > 2) {
          cell.classList.add("invalid"); cell.setAttribute("aria-invalid", "true"); cell.title = res.body.error;
        } else if (res.body.field) {
          var grid = form.querySelector('table[data-matrix="' + res.body.field + '"]');
          if (grid) grid.classList.add("has-error");
        }
      });
  }
  form.addEventListener("input", function () { clearTimeout(pending); pending = setTimeout(update, 120); });
  form.addEventListener("submit", function (e) { e.preventDefault(); update(); });
})();
