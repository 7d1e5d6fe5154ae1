// Evaluated in Anki's reviewer webview (mw.reviewer.web) after a card side has rendered.
// Returns a JSON string: raw measurements only; tests/desktop/reviewer.py turns them into pass/fail checks.
(function () {
  "use strict";
  const qa = document.getElementById("qa");
  const px = (v) => parseFloat(v) || 0;
  const rect = (el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left + scrollX, top: r.top + scrollY, width: r.width, height: r.height,
             right: r.right + scrollX, bottom: r.bottom + scrollY,
             vtop: r.top, vleft: r.left };  // v*: viewport coordinates (for screenshot pixels)
  };
  const parseColor = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || "");
    if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const over = (fg, bg) => ({  // alpha-composite fg over opaque bg
    r: fg.r * fg.a + bg.r * (1 - fg.a), g: fg.g * fg.a + bg.g * (1 - fg.a), b: fg.b * fg.a + bg.b * (1 - fg.a), a: 1 });
  const effectiveBg = (el) => {  // composite backgrounds from the root down to el
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.push(e);
    let bg = { r: 255, g: 255, b: 255, a: 1 };
    for (const e of chain.reverse()) {
      const c = parseColor(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) bg = over(c, bg);
    }
    return bg;
  };
  const contrast = (fgCss, el) => {
    const bg = effectiveBg(el);
    const fg = over(parseColor(fgCss) || { r: 0, g: 0, b: 0, a: 1 }, bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    return Math.round(((a + 0.05) / (b + 0.05)) * 100) / 100;
  };
  const REGIONS = ["answer", "cloze", "question", "cloze-text", "sentence", "summary", "cue", "status", "meta"];
  const regionOf = (el) => {
    for (let e = el.parentElement; e && e !== qa; e = e.parentElement) {
      for (const r of REGIONS) if (e.classList && e.classList.contains(r)) return { name: r, el: e };
    }
    return { name: "other", el: el.parentElement };
  };
  const isWord = (ch) => /[A-Za-z0-9_]/.test(ch || "");

  // Line boxes of an element's text, character by character (Range.getClientRects()).
  const lineBreaks = (el) => {
    const chars = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (let i = 0; i < n.data.length; i++) {
        const r = document.createRange();
        r.setStart(n, i); r.setEnd(n, i + 1);
        const rs = Array.from(r.getClientRects()).filter((x) => x.width > 0 || x.height > 0);
        if (rs.length) chars.push({ ch: n.data[i], top: rs[0].top, bottom: rs[0].bottom });
      }
    }
    const breaks = [];
    let lines = chars.length ? 1 : 0;
    for (let i = 1; i < chars.length; i++) {
      const prev = chars[i - 1], cur = chars[i];
      if ((cur.top + cur.bottom) / 2 > prev.bottom) {  // this character starts a new line box
        lines++;
        const before = chars.slice(Math.max(0, i - 12), i).map((c) => c.ch).join("");
        const after = chars.slice(i, i + 12).map((c) => c.ch).join("");
        breaks.push({ index: i, before, after, mid_word: isWord(prev.ch) && isWord(cur.ch) });
      }
    }
    return { lines, breaks };
  };

  const out = {};
  const html = document.documentElement, body = document.body;
  out.html_class = html.className;
  out.body_class = body.className;
  out.night_mode = body.classList.contains("nightMode");
  out.viewport = { width: innerWidth, height: innerHeight, dpr: devicePixelRatio, scrollY: scrollY };
  const bs = getComputedStyle(body);
  out.body = { color: bs.color, background: bs.backgroundColor, font_family: bs.fontFamily, font_size: bs.fontSize,
               padding_left: px(bs.paddingLeft), padding_right: px(bs.paddingRight),
               margin_left: px(bs.marginLeft), margin_right: px(bs.marginRight) };
  const br = rect(body);
  out.card_content = { left: br.left + px(bs.paddingLeft) + px(bs.borderLeftWidth),
                       right: br.right - px(bs.paddingRight) - px(bs.borderRightWidth) };
  out.card_content.width = out.card_content.right - out.card_content.left;

  // what renders
  const text = (sel) => Array.from(qa.querySelectorAll(sel)).map((e) => e.innerText.trim());
  out.text = {
    qa: qa ? qa.innerText.trim() : "",
    deckgen_blocks: qa.querySelectorAll(".deckgen").length,
    question: text(".question"), answer: text(".answer"), cloze_text: text(".cloze-text"),
    cloze: text(".cloze"), cue: text(".cue"), summary: text(".summary"),
    labels: text(".label"), source: text(".source"), where: text(".where"),
    // a line's own text, without its label
    sentence: Array.from(qa.querySelectorAll(".sentence")).map((e) => Array.from(e.childNodes)
      .filter((n) => !(n.classList && n.classList.contains("label"))).map((n) => n.textContent).join("").trim()),
  };
  const fontPx = (sel) => Array.from(qa.querySelectorAll(sel)).map((e) => px(getComputedStyle(e).fontSize));
  out.font_px = { source: fontPx(".source"), where: fontPx(".where"), summary: fontPx(".summary") };
  out.fonts_status = document.fonts ? document.fonts.status : null;

  // the column: the project's .deckgen blocks (max-width + auto margins)
  const cols = Array.from(qa.querySelectorAll(".deckgen")).map(rect);
  out.column = cols.length ? { left: Math.min(...cols.map((c) => c.left)), right: Math.max(...cols.map((c) => c.right)) } : null;
  if (out.column) out.column.width = out.column.right - out.column.left;

  // colour of answer-ish regions
  const colorOf = (sel) => Array.from(qa.querySelectorAll(sel)).map((e) => getComputedStyle(e).color);
  out.region_colors = { answer: colorOf(".answer"), cloze: colorOf(".cloze"), question: colorOf(".question") };

  // code elements
  out.codes = Array.from(qa.querySelectorAll("code")).map((code) => {
    const cs = getComputedStyle(code);
    const reg = regionOf(code);
    const refColor = reg.el ? getComputedStyle(reg.el).color : null;
    const lb = lineBreaks(code);
    return {
      text: code.textContent, region: reg.name, color: cs.color, region_color: refColor,
      color_matches_region: cs.color === refColor,
      background: cs.backgroundColor, contrast: contrast(cs.color, code),
      region_contrast: reg.el ? contrast(refColor, code) : null,
      word_break: cs.wordBreak, overflow_wrap: cs.overflowWrap, white_space: cs.whiteSpace, line_break: cs.lineBreak,
      has_space: /\s/.test(code.textContent), lines: lb.lines, breaks: lb.breaks, rect: rect(code),
    };
  });

  // hr#answer
  const hr = document.getElementById("answer");
  if (hr && hr.tagName === "HR") {
    const s = getComputedStyle(hr);
    const r = rect(hr);
    const side = (k) => ({ width: px(s[`border${k}Width`]), style: s[`border${k}Style`], color: s[`border${k}Color`] });
    const bt = side("Top"), bb = side("Bottom");
    const visible = (b) => b.width > 0 && b.style !== "none" && b.style !== "hidden" && (parseColor(b.color) || { a: 0 }).a > 0;
    const bands = [];
    if (visible(bt)) bands.push({ part: "border-top", px: bt.width, color: bt.color });
    const contentH = r.height - (visible(bt) ? bt.width : 0) - (visible(bb) ? bb.width : 0);
    const bg = parseColor(s.backgroundColor);
    if (contentH > 0 && bg && bg.a > 0) bands.push({ part: "background", px: contentH, color: s.backgroundColor });
    if (visible(bb)) bands.push({ part: "border-bottom", px: bb.width, color: bb.color });
    const col = out.column, card = out.card_content;
    out.hr = {
      height: s.height, box_sizing: s.boxSizing, background_color: s.backgroundColor,
      border_top: bt, border_bottom: bb, margin_top: s.marginTop, margin_bottom: s.marginBottom,
      rect: r, painted_height: r.height, bands, visible_lines: bands.length,
      within_column: col ? r.left >= col.left - 0.5 && r.right <= col.right + 0.5 : null,
      width_vs_column: col ? Math.round((r.width / col.width) * 1000) / 1000 : null,
      spans_card_width: Math.abs(r.width - card.width) < 2,
      parent: hr.parentElement ? (hr.parentElement.id || hr.parentElement.className || hr.parentElement.tagName) : null,
    };
  } else {
    out.hr = null;
  }
  return JSON.stringify(out);
})()
