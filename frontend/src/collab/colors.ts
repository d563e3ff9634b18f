// A person's colour: the same on every screen and every page (the circuit editor's
// presence, the run page's watchers), from their name.

export const COLORS = ['#e11d48', '#2563eb', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d'];

/** A person's colour, the same on every screen (from their name). */
export function colorOf(name: string): string {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return COLORS[h % COLORS.length]!;
}
