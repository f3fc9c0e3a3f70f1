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
            land(fresh, f);
          })
          .catch(function () { f.submit(); });
      });
    });
  }
  document.querySelectorAll("section.check").forEach(wireCheck);

  // After a check is swapped in, the focus goes where the answer went (the verdict, the saved
  // answer, the chosen button; the input again when the verdict asks to answer again), and the
  // page's live region (#announce) reads out what changed.
  var announcer = document.getElementById("announce");
  function say(text) {
    if (!announcer) return;
    announcer.textContent = "";  // the same words twice are read out twice
    setTimeout(function () { announcer.textContent = text; }, 50);
  }
  function focusOn(el) {
    if (!el.matches("a[href], button, input, select, textarea")) el.setAttribute("tabindex", "-1");
    el.focus({ preventScroll: true });
  }
  function land(fresh, posted) {
    var target = null, text = "";
    if (posted.id) {  // an exercise
      var form = fresh.querySelector("#" + posted.id);
      var verdict = form && form.querySelector(".verdict");
      if (verdict) {
        text = verdict.textContent;
        target = verdict.classList.contains("hint") ? form.querySelector("input[name=answer]") : verdict;
      }
    } else if (posted.classList.contains("answer-form")) {
      target = fresh.querySelector(".your-answer");
      text = target ? target.textContent : "";
    } else if (posted.querySelector("input[name=status]")) {
      target = fresh.querySelector(".assess button.chosen");
      text = target ? target.textContent : "";
    }
    if (!target) return;
    focusOn(target);
    if (text) say(text.replace(/\s+/g, " ").trim());
  }

  // Explorer: recompute as the learner types.
  var form = document.getElementById("explorer-form");
  if (!form) return;
  // The size menus change the page only with their Resize button (arrow keys move through
  // the options without reloading it).
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
    var T = +form.T.value, C = +form.C.value, n = +form.n_head.value;
    var width = n > 1 ? C : +form.d.value;
    var x = [], tokens = [];
    for (var b = 0; b < 2; b++) {
      x.push(matrix("x", T, C, "x[" + b + "]"));
      var row = [];
      for (var t = 0; t < T; t++) row.push(form.querySelector('[data-token="tok[' + b + "][" + t + ']"]').value);
      tokens.push(row);
    }
    var out = { n_head: n, x: x, tokens: tokens };
    ["w_q", "w_k", "w_v"].forEach(function (k) { out[k] = matrix(k, C, width, k); });
    if (n > 1) out.w_o = matrix("w_o", C, C, "w_o");
    return out;
  }
  // The language switch and the size form carry the edits (the page's state) in the URL.
  var stateField = document.getElementById("state-field");
  function keepState(body) {
    var state = Object.assign({ preset: form.preset.value, C: +form.C.value, w_o: null }, body);
    stateField.value = JSON.stringify(state);
    if (!switcher) return;
    var query = new URLSearchParams({
      lang: switcher.getAttribute("lang"), preset: form.preset.value, T: form.T.value,
      C: form.C.value, d: form.d.value, n_head: form.n_head.value, state: stateField.value
    });
    switcher.href = "/explorer?" + query.toString();
  }
  var errorBox = document.getElementById("explorer-error");
  var stages = document.getElementById("stages");
  var staleNote = document.getElementById("stale-note");
  var sizeForm = document.getElementById("size-form");
  var pending = null, seq = 0;
  function clearMarks() {
    form.querySelectorAll(".invalid").forEach(function (el) { el.classList.remove("invalid"); el.removeAttribute("aria-invalid"); el.removeAttribute("aria-describedby"); });
    form.querySelectorAll(".has-error").forEach(function (el) { el.classList.remove("has-error"); });
  }
  // An error is shown under the grid it concerns (by the size menus for a size), and the
  // results stay, marked as those of the last valid input.
  function showError(message, cell, field) {
    var grid = cell ? cell.closest("table.grid") : field && form.querySelector('table[data-matrix="' + field + '"]');
    var block = grid && grid.closest(".grid-block");
    if (block) block.appendChild(errorBox);
    else if (sizeForm && field && sizeForm[field]) sizeForm.insertAdjacentElement("afterend", errorBox);
    errorBox.hidden = false;
    errorBox.textContent = message;
    stages.classList.add("stale");
    if (staleNote) staleNote.hidden = false;
    if (cell) {
      cell.classList.add("invalid"); cell.setAttribute("aria-invalid", "true");
      cell.setAttribute("aria-describedby", "explorer-error");
    } else if (grid) grid.classList.add("has-error");
  }
  // The cells are checked here first, by the words of the server's check (data-empty, ...),
  // so a keystroke that leaves a cell unreadable sends nothing.
  function unreadable() {
    var cells = form.querySelectorAll("input[data-cell]");
    for (var i = 0; i < cells.length; i++) {
      var text = cells[i].value.trim(), key = "";
      if (!text) key = "empty";
      else if (!NUMBER.test(text)) key = "text";
      else if (!isFinite(Number(text))) key = "finite";
      if (key) {
        var words = form.dataset[key].replace("{place}", cells[i].dataset.place).replace("{found}", text.slice(0, 24));
        return { cell: cells[i], message: words };
      }
    }
    return null;
  }
  if (sizeForm) {
    // n_head must divide C: the menu offers only those values for the C chosen.
    sizeForm.C.addEventListener("change", function () {
      var C = +sizeForm.C.value, heads = sizeForm.n_head;
      Array.prototype.forEach.call(heads.options, function (o) { o.disabled = C % +o.value !== 0; });
      if (heads.options[heads.selectedIndex].disabled) heads.value = "1";
    });
  }
  function update() {
    var mine = ++seq;
    var body = payload();
    keepState(body);
    clearMarks();
    var bad = unreadable();
    if (bad) { showError(bad.message, bad.cell, ""); return; }
    var lang = document.documentElement.lang === "en" ? "en" : "zh";
    fetch("/api/explorer?lang=" + lang, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
      body: JSON.stringify(body)
    }).then(function (r) { return r.json().then(function (body) { return { ok: r.ok, body: body }; }); })
      .then(function (res) {
        if (mine !== seq) return;  // a newer edit is on its way
        clearMarks();
        if (res.ok) {
          errorBox.hidden = true;
          stages.innerHTML = res.body.html;
          stages.classList.remove("stale");
          if (staleNote) staleNote.hidden = true;
          return;
        }
        var cell = res.body.cell && form.querySelector('[data-cell="' + res.body.cell + '"]');
        var one = cell && res.body.cell.split("[").length > 2 ? cell : null;
        showError(res.body.error, one, res.body.field);
      });
  }
  form.addEventListener("input", function () { clearTimeout(pending); pending = setTimeout(update, 120); });
  form.addEventListener("submit", function (e) { e.preventDefault(); update(); });
})();

// Notes and search: the note box saves as the learner types, and Ctrl+K / ⌘K jumps to search.
(function () {
  "use strict";
  var token = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var search = document.getElementById("search-box");
  document.addEventListener("keydown", function (e) {
    if (search && (e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "k") {
      e.preventDefault();
      search.focus();
      search.select();
    }
  });
  // Each note box posts its form (the no-JavaScript path) with Accept: application/json, half a
  // second after the last keystroke, when it loses focus, and when the page is hidden or closed
  // (keepalive lets that last request outlive the tab).
  document.querySelectorAll("form.note-form").forEach(function (form) {
    var box = form.querySelector("textarea");
    var status = form.querySelector(".note-status");
    var saved = box.value, timer = null;
    function save(leaving) {
      clearTimeout(timer);
      timer = null;
      if (box.value === saved) {
        if (!leaving) status.textContent = form.dataset.saved;
        return;
      }
      var sent = box.value;
      fetch(form.action, {
        method: "POST", credentials: "same-origin", keepalive: leaving,
        headers: { "X-CSRF-Token": token, "Accept": "application/json" },
        body: new URLSearchParams(new FormData(form))
      }).then(function (r) {
        if (!r.ok) throw new Error(String(r.status));
        saved = sent;
        if (box.value === sent) status.textContent = form.dataset.saved;
      }).catch(function () { status.textContent = form.dataset.failed; });
    }
    box.addEventListener("input", function () {
      status.textContent = form.dataset.typing;
      clearTimeout(timer);
      timer = setTimeout(function () { save(false); }, 500);
    });
    box.addEventListener("blur", function () { save(false); });
    window.addEventListener("pagehide", function () { save(true); });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden") save(true);
    });
  });
})();
