/* PII Lab: the theme's interface labels in Japanese on Japanese pages (<html lang="ja">, set by
   book/_ext/piilab_book.py).

   Only the theme's own interface is touched: the elements of a fixed list of selectors (the
   previous/next links, the "Contents" headings, the header buttons' tooltips, figure numbers),
   and in them only a text node or attribute whose whole value is a known label. Code cells,
   outputs and prose are never read or changed (tests/test_browser.py compares every code cell
   of every page with its source). Labels that Sphinx writes into the page itself (the prompts
   of hidden cells) are set in Japanese by book/_ext/piilab_nav.py; sphinx-togglebutton's hints
   are its own variables, set here before it uses them. */
(function () {
  "use strict";
  const LABELS = {
    "Contents": "目次",
    "previous": "前へ",
    "next": "次へ",
    "Previous": "前へ",
    "Next": "次へ",
    "Search": "検索",
    "Search this book...": "この本を検索…",
    "Print to PDF": "PDF に印刷",
    "Download source file": "ソースファイルをダウンロード",
    "Download this page": "このページをダウンロード",
    "Fullscreen mode": "全画面表示",
    "Launch interactive content": "対話型コンテンツを起動",
    "Source repositories": "ソースリポジトリ",
    "Source repository": "ソースリポジトリ",
    "Edit this page": "このページを編集",
    "Open an issue": "問題を報告",
    "Toggle navigation": "ナビゲーションの切り替え",
    "Toggle primary sidebar": "サイドバーの切り替え",
    "Toggle secondary sidebar": "目次の切り替え",
    "Color mode": "配色",
    "Light": "ライト",
    "Dark": "ダーク",
    "System Settings": "システム設定",
    "Back to top": "ページの先頭へ",
    "Skip to main content": "本文へ移動",
    "Toggle hidden content": "隠れた内容の表示を切り替え",
    "Repository": "リポジトリ",
    "Open issue": "問題を報告",
    "Suggest edit": "編集を提案",
    "Download notebook file": "ノートブックをダウンロード",
    "Launch on Colab": "Colab で開く",
    "next page": "次のページ",
    "previous page": "前のページ",
    "Link to this heading": "この見出しへのリンク",
    "On this page": "このページの内容",
    "Site navigation": "サイトのナビゲーション",
    "Click to show": "クリックして表示",
    "Click to hide": "クリックして隠す",
  };
  /* Elements whose own text nodes are interface labels. */
  const TEXT_SELECTORS = [
    ".prev-next-area .prev-next-subtitle",   // "previous" / "next"
    ".bd-sidebar-secondary .tocsection.onthispage",  // "Contents" above the page's outline
    "#jb-print-toc h2",                       // "Contents" when printing
    ".bd-header-article .btn__text-container",
    ".bd-header-article .dropdown-item .btn__text-container",
    "#pst-back-to-top",
    "a.skip-link",
    "span.toggle-details__summary-text",      // sphinx-togglebutton's hint
    ".search-button__default-text",            // "Search" in the header's search button
  ];
  /* Elements whose tooltip or accessible name is an interface label. */
  const ATTRIBUTE_SELECTORS = [
    ".bd-header-article [title]", ".bd-header-article [aria-label]",
    ".bd-header-article [data-bs-title]", ".bd-header-article [data-bs-original-title]",
    ".bd-header [title]", ".bd-header [aria-label]", ".bd-header [data-bs-original-title]",
    ".bd-sidebar-primary [aria-label]", ".bd-sidebar-secondary [aria-label]",
    ".prev-next-area [title]", ".search-button-field [aria-label]",
    ".bd-sidebar-secondary [aria-label]", "article a.headerlink[title]",
    "nav.bd-links[aria-label]", "nav#pst-page-toc-nav[aria-label]",
    "details.hide > summary[aria-label]", "button.toggle-button",
  ];
  const ATTRIBUTES = ["title", "aria-label", "data-bs-title", "data-bs-original-title",
                      "placeholder", "data-toggle-hint"];

  function label(value) {
    const key = value.trim();
    return Object.prototype.hasOwnProperty.call(LABELS, key) ? LABELS[key] : null;
  }

  function translate() {
    for (const element of document.querySelectorAll(TEXT_SELECTORS.join(","))) {
      for (const node of element.childNodes) {
        if (node.nodeType !== Node.TEXT_NODE) continue;
        const japanese = label(node.nodeValue);
        if (japanese) node.nodeValue = node.nodeValue.replace(node.nodeValue.trim(), japanese);
      }
    }
    for (const element of document.querySelectorAll(ATTRIBUTE_SELECTORS.join(","))) {
      for (const name of ATTRIBUTES) {
        const value = element.getAttribute(name);
        const japanese = value && label(value);
        if (japanese) element.setAttribute(name, japanese);
      }
    }
    for (const input of document.querySelectorAll("form.bd-search input[placeholder]")) {
      const japanese = label(input.placeholder);
      if (japanese) input.placeholder = japanese;
    }
    // Figure numbers in captions and in references to them ("Fig. 3" -> "図 3").
    for (const element of document.querySelectorAll(
        "article figcaption span.caption-number, article a.reference span.std-numref")) {
      for (const node of element.childNodes) {
        if (node.nodeType === Node.TEXT_NODE && /^Fig\.\s*/.test(node.nodeValue)) {
          node.nodeValue = node.nodeValue.replace(/^Fig\.\s*/, "図 ");
        }
      }
    }
  }

  /* Search keeps to a track: the search box of a chapter page asks the search page for that
     track's results (`piilab_lang=en|ja`); the search page shows them, with buttons for the
     other track and for both. One index holds both tracks (book/_ext/piilab_search.py). */
  const TRACKS = {all: ["Both tracks", "両方"], en: ["English", "英語版"], ja: ["日本語", "日本語版"]};

  function pageTrack() {
    const match = window.location.pathname.match(/\/book\/(en|ja)\//);
    return match ? match[1] : null;
  }

  function searchFromThisTrack(track) {
    for (const form of document.querySelectorAll("form.bd-search, form[action$='search.html']")) {
      if (form.querySelector("input[name='piilab_lang']")) continue;
      const hidden = document.createElement("input");
      hidden.type = "hidden";
      hidden.name = "piilab_lang";
      hidden.value = track;
      form.appendChild(hidden);
    }
  }

  function trackFilter() {
    const results = document.getElementById("search-results");
    if (!results) return;
    const params = new URLSearchParams(window.location.search);
    const asked = params.get("piilab_lang");
    const japanese = asked === "ja";
    const bar = document.createElement("div");
    bar.className = "piilab-search-tracks";
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", japanese ? "表示する版" : "Results from");
    const choose = (track) => {
      results.dataset.piilabTrack = track;
      for (const button of bar.querySelectorAll("button")) {
        button.setAttribute("aria-pressed", String(button.dataset.track === track));
      }
    };
    for (const track of ["en", "ja", "all"]) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "btn btn-sm btn-outline-primary";
      button.dataset.track = track;
      button.textContent = TRACKS[track][japanese ? 1 : 0];
      button.addEventListener("click", () => choose(track));
      bar.appendChild(button);
    }
    results.parentNode.insertBefore(bar, results);
    choose(asked === "en" || asked === "ja" ? asked : "all");
  }

  /* The header's language button opens the twin page at the section being read, not at its
     top. A chapter and its twin have the same sections in the same order, so the button's link
     carries the position of the section at the top of the window (#piilab-section-N), and the
     twin page scrolls to its own section at that position and puts that section's id in the
     address. The theme writes every header link with target="_blank"; the twin opens in the
     same tab instead, so that switching back and forth does not pile up tabs (review P3). */
  const SECTION_HASH = /^#piilab-section-(\d+)$/;

  function articleSections() {
    return [...document.querySelectorAll(".bd-article section[id]")];
  }

  function sectionBeingRead() {
    let index = -1;
    articleSections().forEach((section, i) => {
      if (section.getBoundingClientRect().top <= 120) index = i;
    });
    return index;
  }

  function twinAtSameSection() {
    for (const button of document.querySelectorAll("a.btn-piilab-twin-language")) {
      button.removeAttribute("target");
      const point = () => {
        const url = new URL(button.getAttribute("href"), window.location.href);
        const index = sectionBeingRead();
        url.hash = index > 0 ? `piilab-section-${index}` : "";
        button.href = url.href;
      };
      // before the browser follows the link (click, middle click, keyboard)
      button.addEventListener("mousedown", point);
      button.addEventListener("click", point);
      button.addEventListener("keydown", point);
    }
    const match = SECTION_HASH.exec(window.location.hash);
    if (!match) return;
    const section = articleSections()[Number(match[1])];
    if (!section) return;
    window.history.replaceState(null, "", `#${section.id}`);
    section.scrollIntoView();
  }

  const track = pageTrack();
  const startSearchPage = () => {
    if (track) searchFromThisTrack(track);
    trackFilter();
    twinAtSameSection();
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", startSearchPage);
  } else {
    startSearchPage();
  }

  if (document.documentElement.lang !== "ja") return;
  // sphinx-togglebutton builds its hints from these two variables on DOMContentLoaded.
  /* global toggleHintShow:writable, toggleHintHide:writable */
  const hints = () => {
    if (typeof toggleHintShow !== "undefined") toggleHintShow = LABELS["Click to show"];
    if (typeof toggleHintHide !== "undefined") toggleHintHide = LABELS["Click to hide"];
  };
  hints();
  const run = () => {
    hints();
    translate();
    // Tooltips that Bootstrap moves into data-bs-original-title once it starts.
    window.setTimeout(translate, 500);
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", run);
  } else {
    run();
  }
})();
