// Classic script, loaded before the page's module: every long task of the page from its start
// (buffered: module loading included), and the first page error, for the bench driver to read.
window.__longTasks = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
} catch (e) {
  window.__longTaskError = String(e);
}
window.addEventListener("error", (ev) => {
  window.__benchError = `page error: ${ev.message} ${ev.filename ?? ""}:${ev.lineno ?? ""}`;
});
