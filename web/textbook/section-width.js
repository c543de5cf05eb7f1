// The content width of a page section (its box minus padding), so maps and bars fit narrow screens.

export function innerWidth(node) {
  const cs = getComputedStyle(node);
  return node.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
}
