"use strict";
// pitui's HTML export. Renders the data block with DOM APIs only: every piece of session text
// is set with textContent (the CSP also forbids HTML parsing of strings via Trusted Types).
// The data blocks are zlib-compressed in base64: the page data (JSON) and the session's own
// JSONL lines (offered as a download, never parsed here).
function unpack(id) {
  const text = document.getElementById(id).textContent.trim();
  let bytes;
  if (typeof Uint8Array.fromBase64 === "function") bytes = Uint8Array.fromBase64(text);
  else {
    const raw = atob(text);
    bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  }
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate")));
}
async function pituiData() {
  return JSON.parse(await unpack("pitui-data").text());
}
(async function () {
  performance.mark("pitui-start");
  if (typeof DecompressionStream !== "function") {
    document.getElementById("main").textContent = "This browser is too old to open the export (it needs DecompressionStream).";
    return;
  }
  const D = await pituiData();
  performance.mark("pitui-parsed");
  const N = D.nodes; // [id, parent, kind, text, label, timestamp, flags]
  const FLAG_ACTIVE = 1, FLAG_LEAF = 2, ROW = 22, WINDOW = 80, OUTPUT_LINES = 40;
  const MODES = [["default", "default"], ["no-tools", "no tools"], ["user-only", "user only"],
    ["labeled-only", "labelled"], ["all", "all"]];
  const byId = new Map();
  for (let i = 0; i < N.length; i++) byId.set(N[i][0], i);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, ...children) {
    for (const c of children) if (c) parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    return parent;
  }
  const fmt = (n) => Number(n || 0).toLocaleString("en-US");
  const money = (n) => "$" + Number(n || 0).toFixed(4);
  function idLink(index, text) {
    const a = el("a", "idlink", text !== undefined ? text : (index >= 0 ? N[index][0] : "?"));
    if (index >= 0) {
      a.href = "#" + encodeURIComponent(N[index][0]);
      a.addEventListener("click", (ev) => { ev.preventDefault(); select(index, true); });
    }
    return a;
  }

  // ------------------------------------------------------------------ Markdown (to DOM nodes)
  const URL_OK = /^(https?:|mailto:)/i;
  function link(label, url, parent, depth) {
    const safe = URL_OK.test(url.trim());
    const a = el(safe ? "a" : "span");
    if (safe) { a.href = url.trim(); a.rel = "noopener noreferrer"; a.target = "_blank"; }
    inline(label, a, depth + 1);
    if (!safe) a.appendChild(document.createTextNode(" (" + url + ")"));
    parent.appendChild(a);
  }
  function findClose(text, d, from) {
    let idx = text.indexOf(d, from);
    while (idx >= 0 && /\s/.test(text[idx - 1])) idx = text.indexOf(d, idx + 1);
    return idx;
  }
  function inline(text, parent, depth) {
    const none = Object.create(null);
    let buf = "", i = 0;
    const flush = () => { if (buf) { parent.appendChild(document.createTextNode(buf)); buf = ""; } };
    while (i < text.length) {
      const c = text[i];
      if (c === "\\" && i + 1 < text.length && /[\\`*_{}\[\]()#+\-.!~|<>]/.test(text[i + 1])) {
        buf += text[i + 1]; i += 2; continue;
      }
      if (c === "`") {
        let j = i; while (text[j] === "`") j++;
        const ticks = text.slice(i, j);
        const end = none[ticks] ? -1 : text.indexOf(ticks, j);
        if (end < 0) { none[ticks] = true; buf += ticks; i = j; continue; }
        flush(); parent.appendChild(el("code", null, text.slice(j, end)));
        i = end + ticks.length; continue;
      }
      if ((c === "*" || c === "_" || c === "~") && depth < 8) {
        const dbl = text[i + 1] === c, d = dbl ? c + c : c;
        const next = text[i + d.length];
        const wordy = c === "_" && i > 0 && /\w/.test(text[i - 1]);
        if ((c !== "~" || dbl) && next && !/\s/.test(next) && !wordy) {
          const end = none[d] ? -1 : findClose(text, d, i + d.length);
          if (end < 0) none[d] = true;
          else if (end > i + d.length) {
            flush();
            const e = el(c === "~" ? "del" : dbl ? "strong" : "em");
            inline(text.slice(i + d.length, end), e, depth + 1);
            parent.appendChild(e); i = end + d.length; continue;
          }
        }
        buf += d; i += d.length; continue;
      }
      if (c === "[" && depth < 8 && !none["]("]) {
        // Labels and URLs are short: looking only a little ahead keeps hostile text linear.
        const ahead = text.slice(i + 1, i + 1 + 2048);
        const rel = ahead.indexOf("](");
        if (rel < 0 && i + 1 + 2048 >= text.length) { none["]("] = true; buf += c; i++; continue; }
        const close = rel < 0 ? -1 : i + 1 + rel;
        const end = close < 0 ? -1 : ahead.indexOf(")", rel + 2);
        if (close > 0 && end > rel && ahead.slice(0, rel).indexOf("[") < 0) {
          const stop = i + 1 + end;
          flush(); link(text.slice(i + 1, close), text.slice(close + 2, stop), parent, depth);
          i = stop + 1; continue;
        }
        buf += c; i++; continue;
      }
      if (c === "h" && (text.startsWith("http://", i) || text.startsWith("https://", i))) {
        const m = /^https?:\/\/[^\s<>()"']+/.exec(text.slice(i, i + 2048));
        if (m) {
          flush(); const url = m[0].replace(/[.,;:!?]+$/, "");
          const a = el("a", null, url); a.href = url; a.rel = "noopener noreferrer"; a.target = "_blank";
          parent.appendChild(a); i += url.length; continue;
        }
      }
      buf += c; i++;
    }
    flush();
  }
  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
  const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
  const ITEM = /^( {0,12})([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
  function isBlockStart(line) {
    return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || ITEM.test(line) || /^ {0,3}>/.test(line);
  }
  function cells(line) {
    let t = line.trim();
    if (t.startsWith("|")) t = t.slice(1);
    if (t.endsWith("|")) t = t.slice(0, -1);
    return t.split("|").map((s) => s.trim());
  }
  function markdown(src, depth) {
    depth = depth || 0;
    const root = el("div", depth ? null : "md");
    if (depth > 12) { root.appendChild(el("div", "plain", src)); return root; }
    const lines = src.replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if (/^\s*$/.test(line)) { i++; continue; }
      if ((m = FENCE.exec(line))) {
        const ch = m[1][0], len = m[1].length, body = [];
        i++;
        while (i < lines.length) {
          const t = lines[i].trim();
          if (t.length >= len && t.split("").every((x) => x === ch)) { i++; break; }
          body.push(lines[i]); i++;
        }
        const pre = el("pre"), code = el("code", m[2] ? "lang-" + m[2] : null, body.join("\n"));
        root.appendChild(add(pre, code)); continue;
      }
      if ((m = HEADING.exec(line))) {
        const h = el("h" + m[1].length); inline(m[2], h, 0); root.appendChild(h); i++; continue;
      }
      if (RULE.test(line)) { root.appendChild(el("hr")); i++; continue; }
      if (/^ {0,3}>/.test(line)) {
        const body = [];
        while (i < lines.length && /^ {0,3}>/.test(lines[i])) { body.push(lines[i].replace(/^ {0,3}> ?/, "")); i++; }
        const q = el("blockquote"); q.appendChild(markdown(body.join("\n"), depth + 1)); root.appendChild(q); continue;
      }
      if ((m = ITEM.exec(line))) {
        const indent = m[1].length, ordered = /\d/.test(m[2][0]);
        const list = el(ordered ? "ol" : "ul");
        if (ordered) { const start = parseInt(m[2], 10); if (start > 1 && start < 1e9) list.start = start; }
        while (i < lines.length) {
          const im = ITEM.exec(lines[i]);
          if (!im || im[1].length !== indent) break;
          const body = [im[3]];
          i++;
          while (i < lines.length) {
            const l = lines[i];
            if (/^\s*$/.test(l)) {
              if (i + 1 < lines.length && /^\s+\S/.test(lines[i + 1]) && (lines[i + 1].length - lines[i + 1].trimStart().length) > indent) { body.push(""); i++; continue; }
              break;
            }
            const sub = ITEM.exec(l);
            if (sub && sub[1].length <= indent) break;
            if (!sub && !/^\s/.test(l) && isBlockStart(l)) break;
            body.push(l.slice(Math.min(indent + 2, l.length - l.trimStart().length))); i++;
          }
          const li = el("li");
          if (body.length === 1) inline(body[0], li, 0); else li.appendChild(markdown(body.join("\n"), depth + 1));
          list.appendChild(li);
          while (i < lines.length && /^\s*$/.test(lines[i]) && i + 1 < lines.length && ITEM.test(lines[i + 1]) && ITEM.exec(lines[i + 1])[1].length === indent) i++;
        }
        root.appendChild(list); continue;
      }
      if (line.indexOf("|") >= 0 && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
        const table = el("table"), head = el("tr");
        for (const c of cells(line)) { const th = el("th"); inline(c, th, 0); head.appendChild(th); }
        table.appendChild(head); i += 2;
        while (i < lines.length && lines[i].indexOf("|") >= 0 && !/^\s*$/.test(lines[i])) {
          const tr = el("tr");
          for (const c of cells(lines[i])) { const td = el("td"); inline(c, td, 0); tr.appendChild(td); }
          table.appendChild(tr); i++;
        }
        root.appendChild(table); continue;
      }
      const para = [];
      while (i < lines.length && !/^\s*$/.test(lines[i]) && !(para.length && isBlockStart(lines[i]))) { para.push(lines[i]); i++; }
      const p = el("p");
      para.forEach((l, k) => {
        if (k) p.appendChild(/( {2}|\\)$/.test(para[k - 1]) ? el("br") : document.createTextNode(" "));
        inline(l.replace(/( {2,}|\\)$/, "").trim(), p, 0);
      });
      root.appendChild(p);
    }
    return root;
  }

  // ------------------------------------------------------------------ blocks
  function longText(cls, text, runs) {
    // Long output shows its first lines, with a button for the rest.
    const wrap = el("div");
    const pre = el("pre", cls);
    const lines = runs ? null : text.split("\n");
    const total = runs ? runs.reduce((n, r) => n + (r[0].match(/\n/g) || []).length, 1) : lines.length;
    const fill = (limit) => {
      pre.textContent = "";
      if (!runs) { pre.textContent = limit ? lines.slice(0, limit).join("\n") : text; return; }
      let seen = 0;
      for (const [t, style] of runs) {
        let piece = t;
        if (limit) {
          const left = limit - seen; if (left <= 0) break;
          const parts = t.split("\n");
          if (parts.length - 1 >= left) piece = parts.slice(0, left).join("\n");
          seen += parts.length - 1;
        }
        const span = el("span", null, piece);
        const s = style >= 0 ? D.styles[style] : null;
        if (s) {
          if (s.fg) span.style.color = s.fg;
          if (s.bg) span.style.backgroundColor = s.bg;
          if (s.b) span.style.fontWeight = "bold";
          if (s.d) span.style.opacity = "0.7";
          if (s.i) span.style.fontStyle = "italic";
          if (s.u || s.s) span.style.textDecoration = (s.u ? "underline " : "") + (s.s ? "line-through" : "");
        }
        pre.appendChild(span);
      }
    };
    wrap.appendChild(pre);
    if (total > OUTPUT_LINES) {
      fill(OUTPUT_LINES);
      const more = el("button", "more", "Show all " + fmt(total) + " lines");
      more.addEventListener("click", () => { fill(0); more.remove(); });
      wrap.appendChild(more);
    } else fill(0);
    return wrap;
  }
  function diffView(rows) {
    const box = el("div", "diff");
    for (const [op, text] of rows) {
      const cls = op === "+" ? "add" : op === "-" ? "del" : op === "@" ? "hunk" : null;
      box.appendChild(el("div", cls, op === "@" ? text : op + text));
    }
    return box;
  }
  function content(blocks) {
    const box = el("div");
    for (const b of blocks) {
      if (b[0] === "text") box.appendChild(b[1].split("\n").length > OUTPUT_LINES ? longText("", b[1]) : el("div", "plain", b[1]));
      else if (b[0] === "ansi") box.appendChild(longText("term", "", b[1]));
      else if (b[0] === "img") { const img = el("img", "inline"); img.alt = "image"; img.src = "data:" + b[1] + ";base64," + b[2]; box.appendChild(img); }
      else if (b[0] === "note") box.appendChild(el("div", "note", b[1]));
    }
    return box;
  }
  function resultView(b, tokens) {
    const [, , name, isError, inner, diff] = b;
    const box = el("div", "output");
    box.appendChild(el("div", "result-head" + (isError ? " err" : ""), (isError ? "error from " : "result of ") + name + " · ~" + fmt(tokens) + " tokens"));
    if (diff && diff.length) box.appendChild(diffView(diff));
    const out = content(inner);
    if (inner.some((x) => x[0] === "text")) for (const pre of out.querySelectorAll(".plain")) pre.className = "plain";
    box.appendChild(out);
    return box;
  }
  function renderBlocks(m, calls) {
    const out = el("div");
    for (const b of m.b) {
      const k = b[0];
      if (k === "md") out.appendChild(markdown(b[1]));
      else if (k === "text") out.appendChild(content([b]));
      else if (k === "think") {
        const d = el("details", "think");
        d.appendChild(el("summary", null, b[2] ? "Thinking (redacted)" : "Thinking"));
        d.appendChild(el("div", "plain", b[1] || (b[2] ? "(the provider returned it encrypted)" : "")));
        out.appendChild(d);
      } else if (k === "call") {
        const [, id, name, title, args, diff] = b;
        const d = el("details", "call");
        d.open = name === "edit" || name === "bash";
        const s = el("summary", null, title);
        const status = el("span", "status", "…");
        s.appendChild(status); d.appendChild(s);
        const body = el("div", "body");
        if (diff && diff.length) {
          body.appendChild(diffView(diff));
          const a = el("details"); a.appendChild(el("summary", "muted", "arguments")); a.appendChild(el("pre", null, args)); body.appendChild(a);
        } else body.appendChild(el("pre", null, args));
        d.appendChild(body);
        calls.set(id, { body, status });
        out.appendChild(d);
      } else if (k === "error") out.appendChild(el("div", "error", b[1]));
      else if (k === "note") out.appendChild(el("div", "note", b[1]));
      else if (k === "img") out.appendChild(content([b]));
      else if (k === "bash") {
        const [, command, exit, inner, excluded] = b;
        out.appendChild(el("pre", null, "$ " + command));
        const output = content(inner); output.className = "output";
        out.appendChild(output);
        const facts = [];
        if (exit !== null && exit !== undefined) facts.push("exit code " + exit);
        if (excluded) facts.push("not sent to the model (!!)");
        if (facts.length) out.appendChild(el("div", "note", facts.join(" · ")));
      } else if (k === "custom") {
        out.appendChild(el("div", "note", "[" + b[1] + "]"));
        out.appendChild(el("div", "plain", b[2]));
      } else if (k === "compaction") {
        const [, summary, tokens, firstIdx, firstId, read, modified] = b;
        const facts = el("div", "summary-facts");
        add(facts, "Earlier messages were compacted" + (tokens !== null ? " from " + fmt(tokens) + " tokens" : "") + ". First kept entry: ");
        facts.appendChild(firstIdx >= 0 ? idLink(firstIdx) : el("code", null, firstId || "(none)"));
        out.appendChild(facts);
        out.appendChild(markdown(summary));
        if (read.length || modified.length) {
          const f = el("details"); f.appendChild(el("summary", "muted", "Files: " + modified.length + " modified, " + read.length + " read"));
          const list = el("div", "files");
          for (const p of modified) list.appendChild(el("div", null, "M " + p));
          for (const p of read) list.appendChild(el("div", null, "R " + p));
          f.appendChild(list); out.appendChild(f);
        }
      } else if (k === "branch") {
        const [, summary, fromIdx, fromId] = b;
        const facts = el("div", "summary-facts");
        add(facts, "Summary of a branch left behind (from ");
        facts.appendChild(fromIdx >= 0 ? idLink(fromIdx) : el("code", null, fromId || "?"));
        add(facts, ")");
        out.appendChild(facts);
        out.appendChild(markdown(summary));
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ projection and totals
  function projection(i) {
    const parts = [];
    while (i >= 0) { parts.push(D.added[i]); i = D.base[i]; }
    const out = [];
    for (let k = parts.length - 1; k >= 0; k--) for (const v of parts[k]) out.push(v);
    return out;
  }
  function branchTotals(i) {
    const t = { requests: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
    for (let cur = i; cur >= 0; cur = N[cur][1]) {
      const u = D.usage[cur];
      if (!u) continue;
      t.requests++; t.input += u[0]; t.output += u[1]; t.cacheRead += u[2]; t.cacheWrite += u[3]; t.cost += u[4];
    }
    return t;
  }
  function usageText(t) {
    return fmt(t.input + t.output + t.cacheRead + t.cacheWrite) + " tokens (in " + fmt(t.input) + ", out " + fmt(t.output) +
      ", cache " + fmt(t.cacheRead) + "/" + fmt(t.cacheWrite) + ") · " + money(t.cost);
  }
  function systemPanel(state, title, compact) {
    const s = D.systems[state];
    const d = el("details", compact ? "panel req" : "panel");
    d.appendChild(el("summary", null, title + " · ~" + fmt(s.t) + " tokens · " + s.sections.length + " sections · " + s.tools.length + " tools"));
    const body = el("div", "body");
    let filled = false;
    d.addEventListener("toggle", () => {
      if (filled || !d.open) return;
      filled = true;
      for (const [name, text] of s.sections) {
        const sec = el("details");
        sec.appendChild(el("summary", null, name + " · ~" + fmt(Math.ceil(text.length / 4)) + " tokens"));
        sec.appendChild(el("pre", null, text));
        body.appendChild(sec);
      }
      if (!s.sections.length) body.appendChild(el("pre", null, s.text || "(empty)"));
      const tools = el("ul", "tools");
      for (const [name, description, params] of s.tools) {
        const li = el("li"); const t = el("details");
        const sum = el("summary"); sum.appendChild(el("code", null, name)); add(sum, " " + description.split("\n")[0]);
        t.appendChild(sum); t.appendChild(el("pre", null, description + "\n\nparameters: " + params));
        li.appendChild(t); tools.appendChild(li);
      }
      if (s.tools.length) { body.appendChild(el("div", "muted", "Tools")); body.appendChild(tools); }
    });
    d.appendChild(body);
    return d;
  }

  // ------------------------------------------------------------------ the conversation pane
  const main = document.getElementById("main");
  let selected = -1, selectedPath = new Set();
  function messageView(v, calls) {
    const m = D.messages[v];
    const node = N[m.s] || ["?", -1, "?", "", null, "", 0];
    if (m.r === "toolResult" && m.b[0] && calls.has(m.b[0][1])) {
      const call = calls.get(m.b[0][1]);
      call.status.textContent = m.b[0][3] ? "✗" : "✓";
      call.status.className = "status " + (m.b[0][3] ? "err" : "ok");
      call.body.appendChild(resultView(m.b[0], m.t));
      return null;
    }
    const box = el("article", "msg " + m.r);
    box.dataset.entry = node[0];
    const head = el("div", "mh");
    const roleName = { toolResult: "tool result", bashExecution: "bash", compactionSummary: "compaction summary", branchSummary: "branch summary" }[m.r] || m.r;
    head.appendChild(el("span", "role", roleName));
    head.appendChild(idLink(m.s));
    head.appendChild(el("span", null, "~" + fmt(m.t) + " tokens"));
    const u = D.usage[m.s];
    if (m.r === "assistant") {
      const model = D.model[m.s];
      if (model >= 0) head.appendChild(el("span", null, D.models[model]));
      if (u) head.appendChild(el("span", null, "in " + fmt(u[0]) + " · out " + fmt(u[1]) + " · cache " + fmt(u[2]) + "/" + fmt(u[3]) + " · " + money(u[4])));
    }
    if (m.e >= 0) { const e = el("span", "edited", "content replaced by context_edit "); e.appendChild(idLink(m.e)); head.appendChild(e); }
    box.appendChild(head);
    if (m.r === "toolResult") box.appendChild(resultView(m.b[0], m.t)); else box.appendChild(renderBlocks(m, calls));
    if (m.r === "assistant") {
      const parent = node[1];
      const state = parent >= 0 ? D.system[parent] : -1;
      if (state >= 0 && state !== calls.lastSystem) box.appendChild(systemPanel(state, "System prompt #" + (state + 1) + " and tools sent with this request (and the next ones until it changes)", true));
      calls.lastSystem = state;
    }
    return box;
  }
  function show(i) {
    main.textContent = "";
    const node = N[i];
    const head = el("div"); head.id = "head";
    const title = el("div", "title");
    title.appendChild(idLink(i)); add(title, "  " + (node[4] ? "[" + node[4] + "] " : "") + node[3]);
    head.appendChild(title);
    const list = projection(i);
    const shown = list.filter((v) => D.messages[v].r !== "system");
    const tokens = list.reduce((n, v) => n + D.messages[v].t, 0);
    const model = D.model[i] >= 0 ? D.models[D.model[i]] : "(no model)";
    head.appendChild(el("div", "facts", "What the model saw at this node: " + fmt(shown.length) + " messages, ~" + fmt(tokens) +
      " tokens (chars/4) · " + model + " · thinking " + D.thinking[i] + (node[5] ? " · " + node[5] : "")));
    head.appendChild(el("div", "facts", "This branch (root → here): " + usageText(branchTotals(i))));
    main.appendChild(head);
    if (D.system[i] >= 0) main.appendChild(systemPanel(D.system[i], "System prompt #" + (D.system[i] + 1) + " and tools at this node", false));
    const body = el("div"); body.id = "messages";
    main.appendChild(body);
    let start = Math.max(0, shown.length - WINDOW);
    const render = () => {
      body.textContent = "";
      if (start > 0) {
        const more = el("button", "earlier", "Show " + fmt(Math.min(start, WINDOW)) + " earlier messages (" + fmt(start) + " hidden)");
        more.addEventListener("click", () => { start = Math.max(0, start - WINDOW); render(); });
        body.appendChild(more);
      }
      const calls = new Map();
      for (let k = start; k < shown.length; k++) { const view = messageView(shown[k], calls); if (view) body.appendChild(view); }
      if (!shown.length) body.appendChild(el("p", "note", "The model saw no messages at this node."));
    };
    render();
    main.scrollTop = main.scrollHeight;
  }

  // ------------------------------------------------------------------ the tree sidebar
  const tree = document.getElementById("tree"), spacer = el("div");
  tree.appendChild(spacer);
  const search = document.getElementById("search"), filter = document.getElementById("filter"), count = document.getElementById("count");
  for (const [value, label] of MODES) { const o = el("option", null, label); o.value = value; filter.appendChild(o); }
  let mode = "default", visible = [], gutterOf = [], hay = null;
  function gutterText(g) {
    const t = D.gutterTable[g];
    return t.length > 24 ? "…" + t.slice(t.length - 23) : t;
  }
  function applyFilter() {
    const rows = D.rows[mode], gut = D.gutters[mode];
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    visible = []; gutterOf = [];
    if (words.length && !hay) hay = N.map((n) => (n[0] + " " + n[2] + " " + n[3] + " " + (n[4] || "")).toLowerCase());
    for (let k = 0; k < rows.length; k++) {
      const i = rows[k];
      if (words.length && !words.every((w) => hay[i].includes(w))) continue;
      visible.push(i); gutterOf.push(gut[k]);
    }
    count.textContent = fmt(visible.length) + " of " + fmt(N.length) + " entries" + (words.length ? " match" : "") + " · filter: " + mode;
    spacer.style.height = visible.length * ROW + "px";
    paint();
  }
  function paint() {
    for (const r of Array.from(tree.querySelectorAll(".row"))) r.remove();
    const first = Math.max(0, Math.floor(tree.scrollTop / ROW) - 10);
    const last = Math.min(visible.length, first + Math.ceil((tree.clientHeight || 600) / ROW) + 20);
    const frag = document.createDocumentFragment();
    for (let k = first; k < last; k++) {
      const i = visible[k], n = N[i];
      const row = el("div", "row" + (n[6] & FLAG_ACTIVE ? " on-path" : "") + (i === selected ? " sel" : selectedPath.has(i) ? " sel-path" : ""));
      row.dataset.i = String(i);
      row.style.top = k * ROW + "px";
      row.appendChild(el("span", "gutter", gutterText(gutterOf[k])));
      if (n[6] & FLAG_ACTIVE) row.appendChild(el("span", "mark", "• "));
      if (n[4]) row.appendChild(el("span", "label", "[" + n[4] + "] "));
      row.appendChild(el("span", "text", n[3]));
      if (n[6] & FLAG_LEAF) row.appendChild(el("span", "leaf", "  ← leaf"));
      row.title = n[0] + " · " + n[2] + (n[5] ? " · " + n[5] : "");
      frag.appendChild(row);
    }
    tree.appendChild(frag);
  }
  function select(i, scroll) {
    if (i < 0 || i >= N.length) return;
    selected = i; selectedPath = new Set();
    for (let cur = i; cur >= 0; cur = N[cur][1]) selectedPath.add(cur);
    if (scroll) {
      let k = visible.indexOf(i);
      if (k < 0 && (search.value || mode !== "all")) { search.value = ""; if (D.rows[mode].indexOf(i) < 0) { mode = "all"; filter.value = "all"; } applyFilter(); k = visible.indexOf(i); }
      if (k >= 0 && (k * ROW < tree.scrollTop || (k + 1) * ROW > tree.scrollTop + tree.clientHeight)) tree.scrollTop = Math.max(0, k * ROW - tree.clientHeight / 2);
    }
    paint();
    show(i);
    try { history.replaceState(null, "", "#" + encodeURIComponent(N[i][0])); } catch (e) { /* file: URLs may refuse */ }
  }
  tree.addEventListener("scroll", () => window.requestAnimationFrame(paint));
  tree.addEventListener("click", (ev) => {
    const row = ev.target.closest ? ev.target.closest(".row") : null;
    if (row) { select(Number(row.dataset.i), false); tree.focus(); }
  });
  tree.addEventListener("keydown", (ev) => {
    const k = visible.indexOf(selected);
    let next = -1;
    if (ev.key === "ArrowDown") next = Math.min(visible.length - 1, k + 1);
    else if (ev.key === "ArrowUp") next = Math.max(0, k - 1);
    else if (ev.key === "Home") next = 0;
    else if (ev.key === "End") next = visible.length - 1;
    else return;
    ev.preventDefault();
    if (next >= 0) select(visible[next], true);
  });
  search.addEventListener("input", applyFilter);
  filter.addEventListener("change", () => { mode = filter.value; applyFilter(); });

  // ------------------------------------------------------------------ header and statistics
  document.title = D.meta.title;
  document.getElementById("title").textContent = D.meta.title;
  const S = D.stats, U = S.usage;
  document.getElementById("totals").textContent = fmt(S.entries) + " entries · " + fmt(S.branchCount) + " branches · " +
    fmt(S.compactions.length) + " compactions · whole tree: " + fmt(U.tokens) + " tokens, " + money(U.cost) +
    (D.meta.branchOnly ? " · active branch only" : "");
  const statsBox = document.getElementById("stats");
  function fillStats() {
    statsBox.textContent = "";
    const close = el("button", null, "Close"); close.addEventListener("click", () => { statsBox.hidden = true; });
    statsBox.appendChild(close);
    statsBox.appendChild(el("h2", null, "Session statistics"));
    const facts = [
      ["Session", D.meta.sessionId + (S.sessionName ? " · " + S.sessionName : "")], ["Working directory", D.meta.cwd],
      ["Entries", fmt(S.entries) + " (" + Object.entries(S.entryTypes).map(([k, v]) => k + " " + fmt(v)).join(", ") + ")"],
      ["Branches", fmt(S.branchCount) + " (forks " + fmt(S.forks) + ")"],
      ["Messages", Object.entries(S.messages).map(([k, v]) => k + " " + fmt(v)).join(", ")],
      ["Usage, whole tree", fmt(U.requests) + " requests · " + usageText({ input: U.input, output: U.output, cacheRead: U.cacheRead, cacheWrite: U.cacheWrite, cost: U.cost })],
      ["Context at the leaf", fmt(S.context.messages) + " messages, ~" + fmt(S.context.tokens) + " tokens"],
      ["Models", Object.entries(S.models).map(([k, v]) => k + " (" + fmt(v) + ")").join(", ") || "none"],
      ["Files", fmt(S.files.modified.length) + " modified, " + fmt(S.files.read.length) + " only read"],
      ["Exported by", D.meta.generator + (D.meta.exportedAt ? " at " + D.meta.exportedAt : "")],
    ];
    const t = el("table");
    for (const [k, v] of facts) { const tr = el("tr"); tr.appendChild(el("th", null, k)); tr.appendChild(el("td", null, v)); t.appendChild(tr); }
    statsBox.appendChild(t);
    statsBox.appendChild(el("h3", null, "Branches (tip → root), active first, then by cost"));
    const bt = el("table"), hr = el("tr");
    for (const h of ["tip", "entries", "messages", "requests", "tokens", "cost", ""]) hr.appendChild(el("th", null, h));
    bt.appendChild(hr);
    const branches = S.branches.slice().sort((a, b) => (b.active - a.active) || (b.usage.cost - a.usage.cost));
    for (const b of branches.slice(0, 500)) {
      const tr = el("tr"), td = el("td");
      const idx = byId.has(b.tipId) ? byId.get(b.tipId) : -1;
      td.appendChild(idLink(idx, b.tipId)); if (b.active) add(td, " •");
      tr.appendChild(td);
      for (const n of [b.entries, b.messages, b.usage.requests, b.usage.tokens]) tr.appendChild(el("td", "n", fmt(n)));
      tr.appendChild(el("td", "n", money(b.usage.cost)));
      tr.appendChild(el("td", null, (b.label ? "[" + b.label + "] " : "") + b.tipText.slice(0, 80)));
      bt.appendChild(tr);
    }
    statsBox.appendChild(bt);
    if (S.compactions.length) {
      statsBox.appendChild(el("h3", null, "Compactions"));
      for (const c of S.compactions) {
        const div = el("div"); div.appendChild(idLink(byId.has(c.id) ? byId.get(c.id) : -1, c.id));
        add(div, " · " + fmt(c.tokensBefore) + " tokens before · first kept ");
        div.appendChild(idLink(byId.has(c.firstKeptEntryId) ? byId.get(c.firstKeptEntryId) : -1, String(c.firstKeptEntryId)));
        statsBox.appendChild(div);
      }
    }
    const files = el("div", "files");
    for (const p of S.files.modified) files.appendChild(el("div", null, "M " + p));
    for (const p of S.files.read) files.appendChild(el("div", null, "R " + p));
    statsBox.appendChild(el("h3", null, "Files touched"));
    statsBox.appendChild(files);
  }
  document.getElementById("stats-button").addEventListener("click", () => {
    if (statsBox.hidden) fillStats();
    statsBox.hidden = !statsBox.hidden;
  });
  for (const [box, cls] of [["show-thinking", "hide-thinking"], ["show-output", "hide-output"]]) {
    const input = document.getElementById(box);
    const apply = () => document.body.classList.toggle(cls, !input.checked);
    input.addEventListener("change", apply); apply();
  }
  const jsonl = document.getElementById("pitui-jsonl");
  document.getElementById("download").addEventListener("click", async () => {
    const blob = new Blob([await unpack("pitui-jsonl").arrayBuffer()], { type: "application/x-ndjson" });
    const a = el("a"); a.href = URL.createObjectURL(blob); a.download = jsonl.dataset.name || "session.jsonl";
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  });

  // ------------------------------------------------------------------ start
  applyFilter();
  performance.mark("pitui-tree");
  const wanted = decodeURIComponent((location.hash || "").slice(1));
  const start = byId.has(wanted) ? byId.get(wanted) : D.meta.leaf >= 0 ? D.meta.leaf : N.length - 1;
  if (start >= 0) select(start, true);
  else main.appendChild(el("p", "note", "This session has no entries."));
  performance.mark("pitui-shown");
  document.body.dataset.ready = String(Math.round(performance.now()));
})();
