// Text into HTML: the five characters that could end an element or an attribute.
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
