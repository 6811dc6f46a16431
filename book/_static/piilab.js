/* PII Lab: the theme's interface labels in Japanese on Japanese pages (<html lang="ja">, set by
   book/_ext/piilab_book.py). The labels come from the theme's templates and scripts in English;
   only exact, known labels are replaced, never page content. */
(function () {
  "use strict";
  const LABELS = {
    "Contents": "目次",
    "Previous": "前へ",
    "Next": "次へ",
    "previous": "前へ",
    "next": "次へ",
    "Search": "検索",
    "Show code cell content": "コードセルを表示",
    "Hide code cell content": "コードセルを隠す",
    "Show code cell source": "コードを表示",
    "Hide code cell source": "コードを隠す",
    "Show code cell outputs": "出力を表示",
    "Hide code cell outputs": "出力を隠す",
    "Click to show": "クリックして表示",
    "Click to hide": "クリックして隠す",
    "Print to PDF": "PDF に印刷",
    "Download source file": "ソースファイルをダウンロード",
    "Fullscreen mode": "全画面表示",
    "Toggle navigation": "ナビゲーションの切り替え",
  };

  function translate(root) {
    for (const el of root.querySelectorAll("span.caption-number")) {
      el.textContent = el.textContent.replace(/^Fig\.\s*/, "図 ");
    }
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const hits = [];
    while (walker.nextNode()) {
      const text = walker.currentNode.nodeValue.trim();
      if (Object.prototype.hasOwnProperty.call(LABELS, text)) hits.push(walker.currentNode);
    }
    for (const node of hits) {
      const text = node.nodeValue.trim();
      node.nodeValue = node.nodeValue.replace(text, LABELS[text]);
    }
    for (const el of root.querySelectorAll("[title], [aria-label], [data-bs-title]")) {
      for (const name of ["title", "aria-label", "data-bs-title"]) {
        const value = el.getAttribute(name);
        if (value && Object.prototype.hasOwnProperty.call(LABELS, value.trim())) {
          el.setAttribute(name, LABELS[value.trim()]);
        }
      }
    }
  }

  function run() {
    if (document.documentElement.lang !== "ja") return;
    translate(document.body);
    // sphinx-togglebutton writes its hints after load: translate what it adds.
    new MutationObserver((records) => {
      for (const record of records) {
        for (const node of record.addedNodes) {
          if (node.nodeType === Node.ELEMENT_NODE) translate(node);
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", run);
  } else {
    run();
  }
})();
