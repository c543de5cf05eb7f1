// The page's tabs (the trained model, the textbook example, "Open a model") as ARIA tabs. A click
// or the arrow keys switch; the address's #fragment names the open tab, so a link can open any.
// Knows nothing of what the panels show.

/**
 * @param {HTMLElement} tablist   holds buttons role=tab, each aria-controls its panel and data-tab its name
 * @param {(name: string) => void} onChange   after a tab was opened (also for the first one)
 * @returns {{ open(name), current(): string }}
 */
export function bindTabs(tablist, onChange) {
  const tabs = Array.from(tablist.querySelectorAll('[role=tab]'));
  let current = null;

  function open(name, { focus = false } = {}) {
    const tab = tabs.find((t) => t.dataset.tab === name) ?? tabs[0];
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
    }
    if (focus) tab.focus();
    if (current === tab.dataset.tab) return;
    current = tab.dataset.tab;
    if (location.hash.slice(1) !== current)
      history.replaceState(
        null,
        '',
        current === tabs[0].dataset.tab ? location.pathname + location.search : `#${current}`,
      );
    onChange(current);
  }

  tablist.addEventListener('click', (e) => {
    const tab = e.target.closest('[role=tab]');
    if (tab) open(tab.dataset.tab);
  });
  tablist.addEventListener('keydown', (e) => {
    const k = tabs.indexOf(e.target);
    if (k < 0) return;
    const to = { ArrowRight: k + 1, ArrowLeft: k - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    open(tabs[(to + tabs.length) % tabs.length].dataset.tab, { focus: true });
  });
  window.addEventListener('hashchange', () => open(location.hash.slice(1)));

  open(location.hash.slice(1));
  return { open, current: () => current };
}
