import type { Child, FC } from "hono/jsx";

/**
 * The small markdown the context blocks use (headings, bullet and numbered lists, paragraphs,
 * **bold**, _emphasis_, `code`) turned into elements. Every piece of text goes through JSX as a
 * text node, so it is escaped: HTML in a memory is shown as text, never interpreted.
 */
export const Markdown: FC<{ text: string }> = ({ text }) => {
  const blocks: Child[] = [];
  let list: { ordered: boolean; items: Child[] } | null = null;
  let para: string[] = [];
  const flushPara = () => {
    if (para.length) blocks.push(<p>{inline(para.join(" "))}</p>);
    para = [];
  };
  const flushList = () => {
    if (list) blocks.push(list.ordered ? <ol>{list.items}</ol> : <ul>{list.items}</ul>);
    list = null;
  };
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (heading) {
      flushPara();
      flushList();
      const level = Math.min(6, heading[1]!.length + 1);
      const content = inline(heading[2]!);
      blocks.push(level <= 3 ? <h3>{content}</h3> : level === 4 ? <h4>{content}</h4> : <h5>{content}</h5>);
    } else if (bullet || numbered) {
      flushPara();
      const ordered = !bullet;
      if (list && list.ordered !== ordered) flushList();
      list ??= { ordered, items: [] };
      list.items.push(<li>{inline((bullet ?? numbered)![1]!)}</li>);
    } else if (line.trim() === "") {
      flushPara();
      flushList();
    } else {
      flushList();
      para.push(line.trim());
    }
  }
  flushPara();
  flushList();
  return <div class="markdown">{blocks}</div>;
};

function inline(s: string): Child[] {
  const out: Child[] = [];
  // Emphasis by underscores only at word edges: `test_checkout_total` is a name, not emphasis.
  const re = /(\*\*[^*]+\*\*|`[^`]+`|(?<![\p{L}\p{N}_])_[^_]+_(?![\p{L}\p{N}_]))/gu;
  let last = 0;
  for (const m of s.matchAll(re)) {
    if (m.index > last) out.push(s.slice(last, m.index));
    const tok = m[0];
    if (tok.startsWith("**")) out.push(<strong>{tok.slice(2, -2)}</strong>);
    else if (tok.startsWith("`")) out.push(<code>{tok.slice(1, -1)}</code>);
    else out.push(<em>{tok.slice(1, -1)}</em>);
    last = m.index + tok.length;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}
