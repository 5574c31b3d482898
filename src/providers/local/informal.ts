/**
 * Chat words and their standard English ("pic" -> photo, "mom" -> mother, "kids" -> child,
 * children). WordNet reads some of them in another sense ("pic" is a movie, "mum" a
 * chrysanthemum) and knows others not at all ("fave", "bday"), so a question in standard words
 * ("what photos did she share?", "how many children?") missed turns in chat words. A fact indexes
 * the standard words beside the chat word (concept terms), and the chat word's own WordNet senses
 * give way to the standard word's.
 */
const TABLE: Record<string, string[]> = {
  pic: ["photo"],
  pics: ["photo", "photos"],
  selfie: ["photo"],
  mom: ["mother"],
  moms: ["mother", "mothers"],
  mum: ["mother"],
  mums: ["mother", "mothers"],
  kid: ["child"],
  kids: ["child", "children"],
  fave: ["favorite"],
  fav: ["favorite"],
  faves: ["favorite"],
  bday: ["birthday"],
  bro: ["brother"],
  sis: ["sister"],
  fam: ["family"],
  vid: ["video"],
  vids: ["video", "videos"],
  convo: ["conversation"],
  gf: ["girlfriend"],
  bf: ["boyfriend"],
  uni: ["university"],
  folks: ["parents", "family"],
  tv: ["television"],
  flick: ["movie"],
  flicks: ["movie", "movies"],
  vacay: ["vacation"],
  hols: ["holiday"],
  pc: ["computer"],
  biz: ["business"],
  hubby: ["husband"],
  grandkids: ["grandchild", "grandchildren"],
};

/** The standard words of a chat word written in lower case, or null. */
export function standardWords(word: string): string[] | null {
  return TABLE[word] ?? null;
}
