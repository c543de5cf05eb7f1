// Builds DOM nodes tersely: el('td', { class: 'num', text: '0.25' }, child, …).
// `class` and `text` are shorthands; every other key is an attribute.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}
