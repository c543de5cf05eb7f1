// Numbers as the steps view prints them: fixed digits, a real minus sign, and ±∞ and NaN by name.

export function formatNumber(v, digits = 3) {
  if (v === Infinity) return '∞';
  if (v === -Infinity) return '−∞';
  if (Number.isNaN(v)) return 'NaN';
  const s = v.toFixed(digits);
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
}
