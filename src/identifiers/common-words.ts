/**
 * Words that never count as identifiers, even where a command name or a qualified name's last
 * segment would otherwise be taken: English function words, the vaguest verbs and nouns, a test
 * run's status words ("FAILED", "PASSED", vitest's and jest's "FAIL" and "PASS"), and acronyms that name a kind of thing rather than one
 * thing ("CLI", "JSON"; command names stay).
 */
export const COMMON_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being
  below between both but by can could did do does doing done down during each else error errors
  exception few for from further get got had has have having he her here hers him his how i if in
  into is it its itself just let me more most my no nor not now of off on once only or other our
  out over own please same she should so some such than that the their them then there these they
  this those through to too under until up use used using very was we were what when where which
  while who whom why will with would you your yes ok okay true false null none undefined new old
  run make test tests check fix add remove update set value values data file files line lines name err
  type types thing things item items result results info warning warn debug note todo main index
  default print echo cd ls cat fail failed failure pass passed skipped success fatal
  api cli sdk url uri http https json xml html css sql cpu gpu ram dns tcp udp tls ssl jwt csv pdf
  utf ascii faq eta asap fyi`
    .split(/\s+/)
    .filter(Boolean),
);
