// The paste page. No framework, no build step, no network beyond this server.
// Only one kind of string is inserted as HTML: a match's `rendered` parts (`short`, `rest`), which the
// server renders from Markdown with raw HTML off. Everything else goes in through textContent.
"use strict";

(function () {
  const MAX_BYTES = 1024 * 1024;
  const UI = {
    en: {
      tagline: "Paste a PyTorch traceback: what went wrong, where in your code, and a verified fix.",
      paste: "Traceback", language: "Language", both: "both", explain: "Explain",
      privacy: "Nothing you paste is logged or stored.",
      working: "Explaining…", empty: "Paste a traceback first.", tooLarge: "The paste is larger than 1 MiB; keep the end of it, where the error is.",
      failed: "The request failed", network: "Cannot reach the server.",
      exception: "Exception", yourFrame: "Your code", format: "Format", noFrame: "no frame of your own code in the paste",
      none: "No known PyTorch error matches this paste.", nearest: "Nearest entries",
      ambiguous: "Two entries fit about equally well; paste the full traceback to tell them apart.",
      confidence: "confidence", copy: "Copy", copied: "Copied", found: (n) => n === 1 ? "1 match." : n + " matches.",
      more: "Why, every cause and fix, how to check", how: "How this entry was matched:", stop: ".",
      lineIn: (line, fn) => (line ? "line " + line : "") + (fn ? " in " + fn : ""),
    },
    zh: {
      tagline: "粘贴 PyTorch 报错：哪里出了错、出在你代码的哪一行、以及验证过的修复方法。",
      paste: "报错信息（traceback）", language: "语言", both: "双语", explain: "解释",
      privacy: "你粘贴的内容不会被记录或保存。",
      working: "正在分析…", empty: "请先粘贴报错信息。", tooLarge: "粘贴内容超过 1 MiB，请保留结尾部分（错误信息在最后）。",
      failed: "请求失败", network: "无法连接服务器。",
      exception: "异常", yourFrame: "你的代码", format: "格式", noFrame: "粘贴内容里没有你自己代码的调用帧",
      none: "没有找到与这段报错对应的已知 PyTorch 错误。", nearest: "最接近的条目",
      ambiguous: "有两个条目都差不多符合，请贴出完整的 traceback 以便区分。",
      confidence: "置信度", copy: "复制", copied: "已复制", found: (n) => "找到 " + n + " 个匹配。",
      more: "原因分析、全部可能原因和解决办法、如何检查", how: "匹配依据：", stop: "。",
      lineIn: (line, fn) => (line ? "第 " + line + " 行" : "") + (fn ? "，函数 " + fn : ""),
    },
  };

  const $ = (sel) => document.querySelector(sel);
  const form = $("#form"), paste = $("#paste"), button = $("#explain"), status = $("#status");
  const result = $("#result"), parsedBox = $("#parsed"), matchesBox = $("#matches");
  let lastText = null;
  let busy = false;

  function currentLang() {
    const checked = document.querySelector('input[name="lang"]:checked');
    return checked ? checked.value : "en";
  }

  // For "both", UI strings read "English / 中文".
  function t(key, ...args) {
    const lang = currentLang();
    const one = (lg) => { const v = UI[lg][key]; return typeof v === "function" ? v(...args) : v; };
    return lang === "both" ? one("en") + " / " + one("zh") : one(lang === "zh" ? "zh" : "en");
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else node.setAttribute(k, v);
    }
    for (const c of children) {
      if (c == null) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  function applyLabels() {
    const lang = currentLang();
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  }

  function setStatus(text, isError) {
    status.textContent = text || "";
    status.classList.toggle("error", !!isError);
  }

  function initLang() {
    let lang = null;
    try { lang = localStorage.getItem("tbx-lang"); } catch (e) { /* storage off */ }
    if (!["zh", "en", "both"].includes(lang)) {
      lang = (navigator.language || "").toLowerCase().startsWith("zh") ? "zh" : "en";
    }
    const input = document.querySelector('input[name="lang"][value="' + lang + '"]');
    if (input) input.checked = true;
    applyLabels();
  }

  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return;
    }
    const area = el("textarea", { "aria-hidden": "true", class: "offscreen" });
    area.value = text;
    document.body.append(area);
    area.select();
    try { document.execCommand("copy"); } finally { area.remove(); }
  }

  function addCopyButtons(root) {
    for (const pre of root.querySelectorAll("pre")) {
      const wrap = el("div", { class: "codeblock" });
      pre.replaceWith(wrap);
      wrap.append(pre);
      const btn = el("button", { type: "button", class: "copy" }, t("copy"));
      btn.addEventListener("click", async () => {
        try {
          await copyText(pre.innerText.replace(/\n$/, ""));
          btn.textContent = t("copied");
          btn.classList.add("done");
          setTimeout(() => { btn.textContent = t("copy"); btn.classList.remove("done"); }, 1500);
        } catch (e) { btn.textContent = "×"; }
      });
      wrap.append(btn);
    }
  }

  function showParsed(p) {
    parsedBox.replaceChildren();
    const dl = el("dl");
    const head = (p.exc_type || "?") + (p.message ? ": " + p.message.slice(0, 4000) : "");
    dl.append(el("dt", null, t("exception")), el("dd", { class: "exc" }, head));
    const uf = p.user_frame;
    if (uf) {
      const where = el("dd", null, el("code", null, uf.file || "?"), " ", UI[currentLang() === "zh" ? "zh" : "en"].lineIn(uf.line, uf.function));
      if (uf.code) where.append(el("pre", null, uf.code));
      dl.append(el("dt", null, t("yourFrame")), where);
    } else {
      dl.append(el("dt", null, t("yourFrame")), el("dd", null, t("noFrame")));
    }
    dl.append(el("dt", null, t("format")), el("dd", null, p.format || "?"));
    parsedBox.append(dl);
  }

  function showMatches(data) {
    matchesBox.replaceChildren();
    if (data.ambiguous) matchesBox.append(el("p", { class: "card" }, t("ambiguous")));
    if (!data.matches.length && data.raised_at_rendered && typeof data.raised_at_rendered.html === "string") {
      // not curated: where PyTorch raised it, server-rendered like a match (raw HTML disabled)
      const body = el("div", { class: "rendered card longtail" });
      body.innerHTML = data.raised_at_rendered.html;
      matchesBox.append(body);
      return;
    }
    if (!data.matches.length) {
      const box = el("div", { class: "card" }, el("p", null, t("none")));
      if (data.nearest && data.nearest.length) {
        box.append(el("p", null, t("nearest") + ": " + data.nearest.map((n) => n.id + " (" + n.score.toFixed(2) + ")").join(", ")));
      }
      matchesBox.append(box);
      return;
    }
    // Each match: its title and confidence once, the short answer (summary, the cause the paste
    // points to, the best fix), then everything else folded away with how it was matched.
    const html = (part) => part && typeof part.html === "string" ? part.html : "";
    data.matches.forEach((m, i) => {
      const r = m.rendered || {};
      const card = el("article", { class: "card match", "data-id": m.id });
      const outer = el("details", { class: "answer" });
      if (i === 0) outer.open = true;
      outer.append(el("summary", null, el("span", { class: "title" }, m.title), " ",
        el("span", { class: "score" }, "· " + t("confidence") + " " + Number(m.score).toFixed(2))));
      const short = el("div", { class: "rendered short" });
      // The HTML insertions: server-rendered Markdown with raw HTML disabled.
      short.innerHTML = html(r.short) || html(r);
      addCopyButtons(short);
      outer.append(short);
      if (r.rest) {
        const more = el("details", { class: "more" }, el("summary", null, t("more")));
        const rest = el("div", { class: "rendered" });
        rest.innerHTML = html(r.rest);
        addCopyButtons(rest);
        more.append(rest);
        if (m.reasons && m.reasons.length) {
          more.append(el("p", { class: "reasons" }, t("how") + " " + m.reasons.join("; ") + t("stop")));
        }
        outer.append(more);
      }
      card.append(outer);
      matchesBox.append(card);
    });
  }

  async function explain() {
    const text = paste.value;
    if (!text.trim()) { setStatus(t("empty"), true); return; }
    if (new TextEncoder().encode(text).length > MAX_BYTES - 1024) { setStatus(t("tooLarge"), true); return; }
    if (busy) return;
    busy = true;
    button.disabled = true;
    setStatus(t("working"));
    try {
      const resp = await fetch("/v1/explain", {
        method: "POST",
        headers: { "content-type": "application/json", "accept": "application/json" },
        // the page shows the HTML only: the Markdown is not rendered for it
        body: JSON.stringify({ text: text, lang: currentLang(), top: 3, render: ["html"] }),
      });
      let data = null;
      try { data = await resp.json(); } catch (e) { data = null; }
      if (!resp.ok) {
        const msg = data && data.error ? data.error.message : "HTTP " + resp.status;
        setStatus(t("failed") + ": " + msg, true);
        return;
      }
      lastText = text;
      showParsed(data.parsed);
      showMatches(data);
      result.hidden = false;
      setStatus(data.matches.length ? t("found", data.matches.length) : "");
      // the answer starts on screen: on a phone the form fills the first screen, so bring it up
      const answer = matchesBox.querySelector("article.match") || result;
      const top = answer.getBoundingClientRect().top;
      if (top < 0 || top > window.innerHeight * 0.5) answer.scrollIntoView({ block: "start" });
    } catch (e) {
      setStatus(t("network"), true);
    } finally {
      busy = false;
      button.disabled = false;
    }
  }

  form.addEventListener("submit", (ev) => { ev.preventDefault(); explain(); });
  paste.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); explain(); }
  });
  for (const input of document.querySelectorAll('input[name="lang"]')) {
    input.addEventListener("change", () => {
      try { localStorage.setItem("tbx-lang", currentLang()); } catch (e) { /* storage off */ }
      applyLabels();
      if (lastText !== null && paste.value === lastText) explain();  // the answer follows the switch
    });
  }
  initLang();
})();
