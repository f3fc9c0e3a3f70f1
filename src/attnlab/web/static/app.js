// attnlab web lesson: small enhancements only. Every page works without this file.

// What the parts below share: the session token, renewed after a lost session; the page's live
// region (#announce), which reads out what a form changed; moving the focus there.
var attnlabPage = (function () {
  "use strict";
  var announcer = document.getElementById("announce");
  function token() { return (document.querySelector('meta[name="csrf-token"]') || {}).content || ""; }
  function renewToken(fresh) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) meta.content = fresh;
    document.querySelectorAll('input[name="csrf_token"]').forEach(function (i) { i.value = fresh; });
  }
  function say(text) {
    if (!announcer) return;
    announcer.textContent = "";  // the same words twice are read out twice
    setTimeout(function () { announcer.textContent = text.replace(/\s+/g, " ").trim(); }, 50);
  }
  function focusOn(el) {
    if (!el.matches("a[href], button, input, select, textarea")) el.setAttribute("tabindex", "-1");
    el.focus({ preventScroll: true });
  }
  // The one line of a refusal page; a lost session (403 offering the form again) takes the
  // fresh token the page came with (its cookie came with it) and asks to press again.
  function refusal(status, html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var fresh = doc.querySelector('meta[name="csrf-token"]');
    var line = doc.getElementById("error-message");
    if (status === 403 && doc.getElementById("form-again") && fresh && fresh.content) {
      renewToken(fresh.content);
      return document.body.dataset.sessionLost;
    }
    return line ? line.textContent : String(status);
  }
  // "My notes": a deleted note leaves the list (its section's group too when it was the last);
  // the focus goes to the group's heading, else to the notes heading.
  function noteGone(id) {
    var shown = document.getElementById("mynote-" + id);
    if (!shown) return null;
    var group = shown.closest(".note-group");
    var edit = shown.nextElementSibling;
    if (edit && edit.matches("details.note-edit")) edit.remove();
    shown.remove();
    if (group && !group.querySelector(".note-item")) group.remove();
    var target = group && group.isConnected ? group.querySelector("h3") : document.getElementById("notes");
    if (target) focusOn(target);
    return target;
  }
  return {
    token: token, renewToken: renewToken, say: say, focusOn: focusOn, refusal: refusal,
    noteGone: noteGone
  };
})();
(function () {
  "use strict";
  document.documentElement.classList.add("js");

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

  // Every form of the lesson posts in place (fetch), so the learner stays where they were;
  // without this script each form's 303 returns to the form itself (#check-N, #ex-ID, ...).
  // A refusal (4xx) shows its one line next to the form's input and gives the input the focus
  // (nothing is posted twice); a lost session takes the fresh token the refusal came with and
  // asks to press again, keeping what was typed. Only a failed connection falls back to the
  // plain form post.
  var checkPage = document.body.classList.contains("page-lesson") ? "lesson" : "section";
  var pageLang = document.documentElement.lang === "en" ? "en" : "zh";
  var say = attnlabPage.say, focusOn = attnlabPage.focusOn;
  function typedField(f) {
    return f.querySelector("textarea, input[name=answer]") || f.querySelector("button");
  }
  function showRefusal(f, status, html) {
    var text = attnlabPage.refusal(status, html);
    var box = f.querySelector(".form-error");
    if (!box) {
      box = document.createElement("p");
      box.className = "form-error";
      box.id = (f.id || "form-" + Math.random().toString(36).slice(2)) + "-error";
      f.appendChild(box);
    }
    box.textContent = text;
    var input = typedField(f);
    if (input.matches("textarea, input")) {
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", box.id);
    }
    focusOn(input);
    say(text);
  }
  function clearRefusal(f) {
    var box = f.querySelector(".form-error");
    if (box) box.remove();
    f.querySelectorAll("[aria-invalid]").forEach(function (el) {
      el.removeAttribute("aria-invalid");
      el.removeAttribute("aria-describedby");
    });
  }
  // POST ``f`` once; ``saved(response)`` runs when the server took it (its 303, or with
  // ``json`` a 2xx), its failure reloads the page (the post was saved).
  function postInPlace(f, json, saved) {
    if (f.dataset.busy) return;
    f.dataset.busy = "1";
    var sent = false;
    fetch(f.action, {
      method: "POST", body: new URLSearchParams(new FormData(f)), credentials: "same-origin",
      redirect: "manual", headers: json ? { Accept: "application/json" } : {}
    }).then(function (r) {
      sent = true;
      delete f.dataset.busy;
      if (r.type === "opaqueredirect" || (json && r.ok)) {
        clearRefusal(f);
        return Promise.resolve(saved(r)).catch(function () { location.reload(); });
      }
      return r.text().then(function (html) { showRefusal(f, r.status, html); });
    }).catch(function () {
      delete f.dataset.busy;
      if (!sent) f.submit();
    });
  }
  function fetchHtml(url) {
    return fetch(url, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error("no page");
      return r.text().then(function (html) {
        return { url: r.url, doc: new DOMParser().parseFromString(html, "text/html") };
      });
    });
  }

  // Knowledge checks: an answer, an exercise, a self-assessment or "Mark section complete"
  // is posted in place and the check as saved is swapped in (with the progress it changed).
  function wireCheck(check) {
    check.querySelectorAll("form").forEach(function (f) {
      f.addEventListener("submit", function (e) {
        e.preventDefault();
        var done = f.querySelector("button[aria-disabled=true]");
        if (done) return;  // already complete
        var x = window.scrollX, y = window.scrollY;
        var id = check.id.replace("check-", "");
        var url = "/section/" + id + "/check?page=" + checkPage + "&lang=" + pageLang;
        postInPlace(f, false, function () {
          return fetchHtml(url).then(function (got) {
            var fresh = got.doc.querySelector("section.check");
            if (!fresh) throw new Error("no check");
            fresh = document.adoptNode(fresh);
            check.replaceWith(fresh);
            wireCheck(fresh);
            if (f.classList.contains("complete")) showProgress(got.doc, id);
            window.scrollTo(x, y);
            land(fresh, f);
          });
        });
      });
    });
  }
  document.querySelectorAll("section.check").forEach(wireCheck);

  // After "Mark section complete": the progress bar, the section's badge and the contents ✓.
  function showProgress(doc, id) {
    var extra = doc.querySelector("template.fresh-progress");
    var row = extra && extra.content.querySelector(".progress-row");
    var old = document.querySelector("header.top .progress-row");
    if (row && old) old.replaceWith(document.importNode(row, true));
    var article = document.querySelector('article.section[data-section="' + id + '"]');
    var badge = extra && extra.content.querySelector(".badge");
    if (article && badge) {
      article.classList.add("is-done");
      var head = article.querySelector(".section-head");
      if (head && !head.querySelector(".badge")) {
        head.querySelector(".bookmark").before(document.importNode(badge, true));
      }
    }
    var entry = document.querySelector('.toc a[href="#s-' + id + '"]');
    if (entry && badge) entry.parentElement.classList.add("done");
  }

  // After a check is swapped in, the focus goes where the answer went (the verdict, the saved
  // answer, the chosen button, the completed section's button; the input again when the
  // verdict asks to answer again), and the page's live region (#announce) reads it out.
  function land(fresh, posted) {
    var target = null, text = "";
    if (posted.classList.contains("exercise")) {
      var form = fresh.querySelector("#" + posted.id);
      var verdict = form && form.querySelector(".verdict");
      if (verdict) {
        text = verdict.textContent;
        target = verdict.classList.contains("hint") ? form.querySelector("input[name=answer]") : verdict;
      }
    } else if (posted.classList.contains("answer-form")) {
      target = fresh.querySelector(".your-answer");
      text = target ? target.textContent : "";
    } else if (posted.classList.contains("complete")) {
      target = fresh.querySelector(".complete button");
      var progress = document.getElementById("week-progress");
      text = target ? target.textContent + " · " + (progress ? progress.textContent : "") : "";
    } else if (posted.querySelector("input[name=status]")) {
      target = fresh.querySelector(".assess button.chosen");
      text = target ? target.textContent : "";
    }
    if (!target) return;
    focusOn(target);
    if (text) say(text);
  }

  // Bookmarks: the button shows the state the server answers.
  document.querySelectorAll("form.bookmark").forEach(function (f) {
    f.addEventListener("submit", function (e) {
      e.preventDefault();
      postInPlace(f, true, function (r) {
        return r.json().then(function (body) {
          var button = f.querySelector("button");
          button.setAttribute("aria-pressed", body.bookmarked ? "true" : "false");
          button.classList.toggle("chosen", body.bookmarked);
          button.textContent = body.bookmarked ? button.dataset.on : button.dataset.off;
          focusOn(button);
          say(button.textContent);
        });
      });
    });
  });

  // "My notes": a note's Delete button removes it from the list in place.
  document.querySelectorAll("form.note-delete").forEach(function (f) {
    f.addEventListener("submit", function (e) {
      e.preventDefault();
      var words = f.previousElementSibling.dataset.deleted;
      postInPlace(f, true, function () {
        attnlabPage.noteGone(f.querySelector("input[name=note_id]").value);
        say(words);
      });
    });
  });

  // Practice: the answer, "show the solution" and "new numbers" swap in the exercise as saved.
  function wirePractice(main) {
    main.querySelectorAll("form").forEach(function (f) {
      f.addEventListener("submit", function (e) {
        e.preventDefault();
        var seed = f.querySelector("input[name=seed]").value;
        var url = location.pathname + "?lang=" + pageLang + "&seed=" + encodeURIComponent(seed);
        postInPlace(f, false, function () {
          return swapPractice(main, url, function (fresh) {
            if (f.id === "solution") return fresh.querySelector(".practice-solution");
            var verdict = fresh.querySelector("#verdict .verdict");
            if (verdict && verdict.classList.contains("hint")) return [fresh.querySelector("#practice-answer"), verdict];
            return verdict;
          });
        });
      });
    });
    var again = main.querySelector("a.practice-new");
    if (again) again.addEventListener("click", function (e) {
      e.preventDefault();
      swapPractice(main, again.href, function (fresh) { return fresh.querySelector(".practice-text"); })
        .catch(function () { location.href = again.href; });
    });
  }
  function swapPractice(main, url, pick) {
    var x = window.scrollX, y = window.scrollY;
    return fetchHtml(url).then(function (got) {
      var fresh = got.doc.querySelector("main");
      if (!fresh) throw new Error("no exercise");
      main.replaceChildren.apply(main, Array.from(fresh.childNodes).map(function (n) { return document.adoptNode(n); }));
      if (got.url !== location.href.split("#")[0]) history.replaceState(null, "", got.url);
      wirePractice(main);
      window.scrollTo(x, y);
      var found = pick(main);
      var target = Array.isArray(found) ? found[0] : found;
      var read = Array.isArray(found) ? found[1] : found;
      if (!target) return;
      focusOn(target);
      say(read.textContent);
    });
  }
  if (document.body.classList.contains("page-practice")) wirePractice(document.getElementById("main"));

  // Explorer: recompute as the learner types.
  var form = document.getElementById("explorer-form");
  if (!form) return;
  // The size menus change the page only with their Resize button (arrow keys move through
  // the options without reloading it).
  var NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;
  // Full-width digits and signs (１．５, typed by a Chinese input method) as ASCII, and 。 between
  // digits as a decimal point, as the server's attnlab.inputs.text_limits.ascii_forms reads them.
  function ascii(text) {
    return text.replace(/[\uff01-\uff5e]/g, function (c) { return String.fromCharCode(c.charCodeAt(0) - 0xfee0); })
      .replace(/(\d)\u3002(?=\d)/g, "$1.").replace(/\u3002\s*$/, "");
  }
  function value(input) { var t = ascii(input.value); return NUMBER.test(t) ? Number(t) : input.value; }
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
      var text = ascii(cells[i].value).trim(), key = "";
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
      headers: { "Content-Type": "application/json", "X-CSRF-Token": attnlabPage.token() },
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
    // ``saved``: the text the server holds and ``said``, what its last save answered; a save
    // on its way (``sending``, of ``sendingText``) answers a second request for the same text.
    var saved = box.value, said = form.dataset.saved, timer = null;
    var sending = null, sendingText = null, gone = false;
    var listed = document.getElementById("mynote-" + form.querySelector("input[name=note_id]").value);
    function save(leaving, asked) {
      clearTimeout(timer);
      timer = null;
      if (listed && !asked && !box.value.trim()) return;  // "My notes" deletes only on Save
      if (sending && box.value === sendingText) {
        sending.then(function (text) { tell(text, asked); });
        return;
      }
      if (box.value === saved) {
        if (!leaving) tell(said, asked);
        return;
      }
      var sent = box.value;
      var mine = fetch(form.action, {
        method: "POST", credentials: "same-origin", keepalive: leaving,
        headers: { "X-CSRF-Token": attnlabPage.token(), "Accept": "application/json" },
        body: new URLSearchParams(new FormData(form))
      }).then(function (r) {
        if (r.status === 403 || r.status === 422) {
          return r.text().then(function (html) { return attnlabPage.refusal(r.status, html); });
        }
        if (!r.ok) throw new Error(String(r.status));
        return r.json().then(function (body) {
          saved = sent;
          said = body.deleted ? form.dataset.deleted : form.dataset.saved;
          var shown = document.getElementById("mynote-" + body.id);  // on "My notes"
          if (shown && body.deleted) gone = true;
          else if (shown) shown.querySelector(".note-text").textContent = sent;
          return said;
        });
      }).catch(function () { return form.dataset.failed; });
      sending = mine;
      sendingText = sent;
      mine.then(function (text) {
        if (sending === mine) sending = null;
        if (gone) {  // emptied on "My notes": the note leaves the list
          attnlabPage.noteGone(form.querySelector("input[name=note_id]").value);
          attnlabPage.say(text);
        } else if (box.value === sent || text !== said) tell(text, asked);
      });
    }
    // What a save says; after the "Save note" button (``asked``) the focus goes back to the
    // note, and the live region reads out what was asked for and every failure.
    function tell(text, asked) {
      status.textContent = text;
      if (asked) attnlabPage.focusOn(box);
      if (asked || (text !== form.dataset.saved && text !== form.dataset.deleted)) attnlabPage.say(text);
    }
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      save(false, true);
    });
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
