// hookrelay console: refreshes the parts of a page marked data-live, in
// place, every two seconds while the page is visible. It fetches the same
// page again (the server renders and escapes it) and swaps each live part
// by its id, leaving alone a part that holds the keyboard focus.
(function () {
  "use strict";
  var every = 2000;
  if (!document.querySelector("[data-live]")) {
    return;
  }
  var busy = false;
  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    document.querySelectorAll("[data-live][id]").forEach(function (old) {
      var next = fresh.getElementById(old.id);
      if (!next || old.contains(document.activeElement)) {
        return;
      }
      old.replaceWith(document.importNode(next, true));
    });
  }
  function refresh() {
    if (busy || document.hidden) {
      return;
    }
    busy = true;
    fetch(location.href, { headers: { "X-Console-Live": "1" }, credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok || r.redirected) {
          throw new Error("stale");
        }
        return r.text();
      })
      .then(swap)
      .catch(function () {})
      .then(function () { busy = false; });
  }
  setInterval(refresh, every);
})();
