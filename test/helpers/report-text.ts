// Reading a printed report as a person does: which medians it names for each kind of link.

/** Each kind of link and the medians printed for it anywhere in the report. */
export function mediansByKind(text: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    for (const m of line.matchAll(/links (inside a host|between hosts)[^:]*: median ([\d.]+)|median of the links (inside a host|between hosts), ([\d.]+)/g)) {
      const kind = m[1] ?? m[3];
      found.set(kind, (found.get(kind) ?? new Set()).add(m[2] ?? m[4]));
    }
  }
  return found;
}
