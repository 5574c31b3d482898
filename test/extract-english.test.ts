import { describe, expect, it } from "vitest";
import type { MemoryRow } from "../src/db/memory-row.js";
import { restBeyond } from "../src/ingest/reconcile.js";
import { routeTurns } from "../src/ingest/route.js";
import type { StoredRequest } from "../src/ingest/submit.js";
import { extractArtifacts } from "../src/providers/local/artifacts.js";
import { conceptTerms, expandWord, placeKinds, titleKinds } from "../src/providers/local/concepts.js";
import { FIELD_LABELS, splitSentences, withoutSentencesOf } from "../src/providers/local/english.js";
import { extractLocally, judgeLocally, sameSlot, slotSearches } from "../src/providers/local/extractor.js";
import { introducedName } from "../src/providers/local/names.js";
import type { Turn } from "../src/providers/types.js";
import { composeDeterministic } from "../src/search/compose.js";

const turn = (index: number, role: string, content: string, speaker: string | null = null): Turn => ({
  index,
  role,
  speaker,
  content,
  date: null,
  at: null,
  refDate: null,
  eventId: String(index),
});
/** The local extraction of a live, non-agentic request of these turns. */
const extraction = (turns: Turn[], userName?: string) =>
  extractLocally({ turns, path: "live", extractArtifacts: false, agentic: false, known: [], userName });
const facts = (turns: Turn[], userName?: string) => extraction(turns, userName).facts;
/** A user's turn sent with a date (`at`), which leads its facts and resolves its relative dates. */
const datedTurn = (at: Date, content: string, index = 0): Turn => ({
  ...turn(index, "user", content),
  date: at.toISOString(),
  at,
  refDate: at,
});
/** The first fact's text of a user's message dated `at`. */
const datedText = (at: Date, content: string) => extraction([datedTurn(at, content)]).facts[0]?.text;

describe("third-person facts of tricky turns", () => {
  const cases: Array<[string, string | null]> = [
    // contractions
    ["We'll probably go hiking next weekend.", "The user and others will probably go hiking next weekend."],
    ["We'd love to visit Japan someday.", "The user and others would love to visit Japan someday."],
    ["I don't eat meat anymore, I'm vegan now.", "The user doesn't eat meat anymore, the user is vegan now."],
    ["I've been playing the cello for years.", "The user has been playing the cello for years."],
    // questions are no claims
    ["Can you recommend a good book about gardening?", null],
    // requests to the assistant read as requests
    [
      "Remind me to call my mom on Sunday.",
      "The user asked the assistant to remind them to call their mom on Sunday.",
    ],
    // the tasks people give an assistant ("List the files please" was kept word for word)
    ["List the files please.", "The user asked the assistant to list the files."],
    ["Summarize this article for me.", "The user asked the assistant to summarize this article for them."],
    [
      "Translate my CV into German, please!",
      "The user asked the assistant to translate their CV into German!",
    ],
    // quoted words stay as said
    [
      'My sister said "I\'ll be there at noon" but she was late.',
      "The user's sister said \"I'll be there at noon\" but she was late.",
    ],
    // lists
    ["I have three pets: a dog, a cat and a parrot.", "The user has three pets: a dog, a cat and a parrot."],
    [
      "Me and my husband go to the gym every morning.",
      "The user and their husband go to the gym every morning.",
    ],
    // the speaker's own thing in the clause the speaker is the subject of is "their"; after
    // someone else is named, or in a subject shared with someone, "their" could be theirs
    ["I gave my notice at Acme yesterday.", "The user gave their notice at Acme yesterday."],
    ["I and my wife moved to Berlin.", "The user and their wife moved to Berlin."],
    ["We sold our house last year.", "The user and others sold their house last year."],
    ["I told my boss about my plans.", "The user told their boss about the user's plans."],
    ["I gave the dog my sandwich.", "The user gave the dog the user's sandwich."],
    ["My sister and I visited my parents.", "The user's sister and the user visited the user's parents."],
    ["My mom called me about my car.", "The user's mom called the user about the user's car."],
    [
      "I watch a lot of movies and I fix old bikes.",
      "The user watches a lot of movies and the user fixes old bikes.",
    ],
    // an adverb before the verb
    ["I generally don't get competitive.", "The user generally doesn't get competitive."],
    // adverbs of one or two words leave the verb to conjugate; -ly verbs are verbs
    ["I no longer work at Acme.", "The user no longer works at Acme."],
    ["I now live in a small flat in Berlin.", "The user now lives in a small flat in Berlin."],
    ["I hardly ever drink coffee after lunch.", "The user hardly ever drinks coffee after lunch."],
    ["I fly to Paris every month for work.", "The user flies to Paris every month for work."],
    ["I apply for jobs every week now.", "The user applies for jobs every week now."],
    ["I quit my job last month.", "The user quit their job last month."],
    // verbs the clause coordinates with the speaker's take the third person too; nouns do not
    ["I live in Lisbon and work as a nurse.", "The user lives in Lisbon and works as a nurse."],
    [
      "I study law and teach at a school on weekends.",
      "The user studies law and teaches at a school on weekends.",
    ],
    ["I like pizza and pasta with friends.", "The user likes pizza and pasta with friends."],
    ["I drink tea and coffee in the morning.", "The user drinks tea and coffee in the morning."],
    ["I moved to Lisbon and work as a nurse.", "The user moved to Lisbon and works as a nurse."],
    // an adverb between the "and" and the verb
    ["I left Google and now work at Stripe.", "The user left Google and now works at Stripe."],
    ["I run a bakery and also teach at a school.", "The user runs a bakery and also teaches at a school."],
    ["I like tea and often cake with honey.", "The user likes tea and often cake with honey."],
    ["I went to Rome and then flew to Oslo.", "The user went to Rome and then flew to Oslo."],
    ["I read the book and now plan a trip to Oslo.", "The user read the book and now plans a trip to Oslo."],
    ["I can swim and also run with my dog.", "The user can swim and also run with their dog."],
    // after a modal or an infinitive's "to" a verb keeps its base form
    ["I love to cook and bake for friends.", "The user loves to cook and bake for friends."],
    [
      "I gotta go and buy a present for my sister.",
      "The user gotta go and buy a present for the user's sister.",
    ],
    // openers that only link to the talk before
    ["Big news: I moved to Berlin last month.", "The user moved to Berlin last month."],
    ["And I no longer work at Acme.", "The user no longer works at Acme."],
    ["Nope, I hate seafood.", "The user hates seafood."],
    // three words the speaker says of themselves are a fact; a three-word chat reply is not
    ["I'm vegan now.", "The user is vegan now."],
    ["I love jazz.", "The user loves jazz."],
    ["I know, right.", null],
    // a script without spaces between words
    ["我喜欢喝绿茶，每天早上都喝。", "我喜欢喝绿茶，每天早上都喝。"],
    // the speaker in a plural subject
    [
      "My partner and I are vegetarians since last year.",
      "The user's partner and the user are vegetarians since last year.",
    ],
    ["Jamie and I have two dogs and a cat.", "Jamie and the user have two dogs and a cat."],
    // more tasks for the assistant, and a remark before one
    ["Run the tests please.", "The user asked the assistant to run the tests."],
    ["Write a poem about the sea.", "The user asked the assistant to write a poem about the sea."],
    [
      "That is interesting, tell me more about black holes.",
      "The user asked the assistant to tell them more about black holes.",
    ],
    // a claim before the request is kept as the claim it is
    ["My PIN is 4417, please remember it.", "The user's PIN is 4417, please remember it."],
    [
      "Make sure you run cargo fmt before every commit.",
      "The user asked the assistant to run cargo fmt before every commit.",
    ],
    // talk about the talk, and a lead-in to what follows, say nothing
    ["I see what you mean.", null],
    ["Let me think about it.", null],
    ["Here is my backup script backup.sh:", null],
    // addresses and compound names keep their "me", "I" and "my"
    ["My new email is maria.g@proton.me.", "The user's new email is maria.g@proton.me."],
    [
      "I use I/O heavy scripts with my tool called me-cli.",
      "The user uses I/O heavy scripts with the user's tool called me-cli.",
    ],
    ["My project lives in C:\\Users\\me\\proj.", "The user's project lives in C:\\Users\\me\\proj."],
    ["My notes are in Documents\\me\\notes now.", "The user's notes are in Documents\\me\\notes now."],
    // every "my" is the speaker's
    [
      "My parents live in Kraków and my brother lives in Gdańsk.",
      "The user's parents live in Kraków and the user's brother lives in Gdańsk.",
    ],
    // chat spelling of the first person, and openers run into it
    ["im allergic to peanuts and shellfish", "The user is allergic to peanuts and shellfish"],
    ["i dont like sushi anymore", "The user doesn't like sushi anymore"],
    ["I wrote for i in range(10) in my script.", "The user wrote for i in range(10) in the user's script."],
    ["Yeah I'm her maid of honor.", "The user is her maid of honor."],
    [
      "i went home early and ive been asleep since",
      "The user went home early and the user has been asleep since",
    ],
    // "the user and others" is one subject, not a claim of "others"
    ["I'm a nurse, we live in Ohio.", "The user is a nurse, the user and others live in Ohio."],
    // short life events and who the speaker is are claims
    ["I just got married!", "The user just got married!"],
    ["Just got engaged 💍", "The user just got engaged 💍"],
    ["I'm pregnant!", "The user is pregnant!"],
    ["I'm French.", "The user is French."],
    // ... what the speaker has, in four words, and a lasting trait, in two
    ["I have a dog.", "The user has a dog."],
    ["I own a Tesla.", "The user owns a Tesla."],
    ["We have a boat.", "The user and others have a boat."],
    ["I got a puppy!", "The user got a puppy!"],
    ["I'm left-handed.", "The user is left-handed."],
    // ... and a date beside one word of content ("May" is a modal verb too)
    ["Actually, my birthday is May 5, not May 3.", "The user's birthday is May 5, not May 3."],
    ["Our wedding is on May 3.", "The user's wedding is on May 3."],
    // ... not what the talk has
    ["I have a question.", null],
    ["I have an idea!", null],
    ["I got a sec.", null],
    // ... not a phrase that starts with such a word
    ["A dad joke.", null],
    ["Pregnant pause.", null],
    // Korean: few words, particles attached
    ["제 남편은 요리사예요.", "제 남편은 요리사예요."],
    ["네.", null],
    // a question in Arabic script is no claim
    ["هل يجب أن أنتقل إلى كندا في العام المقبل؟", null],
    // ... names and slang of English included ("Mia", "Uma" are no foreign words; "Lately Ive")
    ["im meeting Mia for lunch", "The user is meeting Mia for lunch"],
    ["i love Uma Thurman movies", "The user loves Uma Thurman movies"],
    ["Lately Ive been running every morning", "Lately the user has been running every morning"],
    ["i and my wife love hiking", "The user and their wife love hiking"],
    // ... but another language's "im" and "i", and a surname, are words of their own
    ["Ich arbeite als Krankenschwester im Klinikum.", "Ich arbeite als Krankenschwester im Klinikum."],
    ["Im Sommer fahre ich nach Italien.", "Im Sommer fahre ich nach Italien."],
    ["Ho portato i bambini al parco.", "Ho portato i bambini al parco."],
    ["Jag bor i stan och jobbar som lärare.", "Jag bor i stan och jobbar som lärare."],
    [
      "I really admire Jony Ive and his design work at Apple.",
      "The user really admires Jony Ive and his design work at Apple.",
    ],
    // requests: the speaker's own words inside one, standing rules, and one asked as a question
    [
      "Please remember I'm allergic to bees.",
      "The user asked the assistant to remember they're allergic to bees.",
    ],
    ["From now on, always answer in Spanish.", "The user asked the assistant to always answer in Spanish."],
    [
      "Never run rm -rf in the repo root please.",
      "The user asked the assistant never to run rm -rf in the repo root.",
    ],
    [
      "Can you remember that my locker code is 4821?",
      "The user asked the assistant to remember that their locker code is 4821.",
    ],
    // ... but not a noun that starts with a request's verb, before a verb of its own
    ["Book club meets every second Tuesday.", "Book club meets every second Tuesday."],
    ["Check engine light came on again.", "Check engine light came on again."],
    ["Remember Sarah is vegan.", "The user asked the assistant to remember Sarah is vegan."],
    // an irregular past takes no -s, with its subject or without
    ["I broke my wrist skiing last winter.", "The user broke their wrist skiing last winter."],
    ["I tore my ACL playing soccer.", "The user tore their ACL playing soccer."],
    ["I lent my car to Joe.", "The user lent their car to Joe."],
    ["Hung out with Dana last night.", "The user hung out with Dana last night."],
    // an interjection before the claim is no part of it
    ["Ugh, my landlord raised the rent again.", "The user's landlord raised the rent again."],
    ["Yikes, I missed my flight.", "The user missed their flight."],
    ["ngl i'm kinda obsessed with pickleball", "The user is kinda obsessed with pickleball"],
    ["Tbh I hate my commute.", "The user hates their commute."],
    // an age said beside another claim is an age all the same; a height is not
    ["I'm 29 and I work as a nurse.", "The user is 29 years old and the user works as a nurse."],
    [
      "My daughter Zoë is 9 and she loves horses.",
      "The user's daughter Zoë is 9 years old and she loves horses.",
    ],
    ["I am 5 and a half feet tall.", "The user is 5 and a half feet tall."],
    // a second verb of the same subject agrees before where it goes ("into", "home", "there")
    [
      "I work remotely most days and go into the office on Mondays.",
      "The user works remotely most days and goes into the office on Mondays.",
    ],
    // numbers say enough
    ["My kids are 4 and 7.", "The user's kids are 4 and 7."],
    // openers of a change of mind are no part of the claim
    ["Actually my favorite color is blue now.", "The user's favorite color is blue now."],
    ["I changed my mind, my favorite color is red.", "The user's favorite color is red."],
    [
      "My wife and I've been married for ten years.",
      "The user's wife and the user have been married for ten years.",
    ],
    // "I am" said in full is "I'm"; a standing said in two words is a claim
    ["I am a nurse.", "The user is a nurse."],
    ["I am an accountant.", "The user is an accountant."],
    ["I am a widow.", "The user is a widow."],
    ["I'm unemployed.", "The user is unemployed."],
    // a two-letter name in capitals is content ("UK", "LA"), "OK" is not
    ["I moved to the UK.", "The user moved to the UK."],
    ["We live in LA.", "The user and others live in LA."],
    ["I'm OK.", null],
    ["I'm gay.", "The user is gay."],
    // a labelled line is the user's attribute
    [
      "Allergies: penicillin, cats. Blood type: O-.",
      "The user's allergies are penicillin, cats. The user's blood type is O-.",
    ],
    ["Favorite food: ramen.", "The user's favorite food is ramen."],
    ["New number: 555-0177.", "The user's new number is 555-0177."],
    ["Weekend: went hiking with the kids.", "The user's weekend: went hiking with the kids."],
    ["Mom: she turns 70 next month.", "The user's mom turns 70 next month."],
    ["Dad: he's 72 and still runs every day.", "The user's dad is 72 and still runs every day."],
    // ... but no utterance, imperative or command's rule: said as it is
    [
      "Mom: don't forget grandpa's birthday is on June 9.",
      "Mom: don't forget grandpa's birthday is on June 9.",
    ],
    ["Woman: The bus is always late on Sundays.", "Woman: The bus is always late on Sundays."],
    ["Mom: call her about the party.", "Mom: call her about the party."],
    ["Git: always rebase, never merge when pulling.", "Git: always rebase, never merge when pulling."],
    ["Question: what should I pack?", null],
    // ... and a state said by an adjective, its subject dropped
    ["Allergic to penicillin.", "The user is allergic to penicillin."],
    ["Proud of my daughter today.", "The user is proud of their daughter today."],
    // a name that is also a verb's past, opening a shared subject, is no dropped "I"
    ["Rose and I went to the park yesterday.", "Rose and the user went to the park yesterday."],
    ["Rose and Tom went hiking.", "Rose and Tom went hiking."],
    ["Rose early and went for a run.", "The user rose early and went for a run."],
    // openers, labels and pictographs before the claim
    [
      "Wait no, sorry, I live in York, Leeds is where I work.",
      "The user lives in York, Leeds is where the user works.",
    ],
    ["You know what, I'll take the job in Denver.", "The user will take the job in Denver."],
    ["Edit: my flight leaves at 9am, not 10am.", "The user's flight leaves at 9am, not 10am."],
    ["P.S. my sister arrives from Lima on Friday.", "The user's sister arrives from Lima on Friday."],
    ["TL;DR: I got the job at Stripe.", "The user got the job at Stripe."],
    ["Also: my wife is a dentist.", "The user's wife is a dentist."],
    ["🎉🎉 Just got engaged to Chris!!! 💍", "The user just got engaged to Chris!!! 💍"],
    // openers that say nothing; a yes or no alone is no claim, where one lives said as "home" is
    ["No, I don't think so. Denver is home.", "Denver is home."],
    ["I guess so.", null],
    ["No thanks, I already booked a hotel in Kyoto.", "The user already booked a hotel in Kyoto."],
    [
      "No worries, my sister can pick me up at the airport.",
      "The user's sister can pick the user up at the airport.",
    ],
    ["Never mind, I found the charger in my car.", "The user found the charger in the user's car."],
    ["oh and my wife is pregnant!", "The user's wife is pregnant!"],
    ["Jesus, my landlord raised the rent again.", "The user's landlord raised the rent again."],
    // a log's or a code marker's line is a program's words
    ["ERROR: connection refused to the database at 10.0.0.4 port 5432.", null],
    ["[WARN] disk usage above 90 percent on the build server", null],
    // ... but a to-do is the speaker's own
    ["TODO: book the vet for Rex on Monday.", "TODO: book the vet for Rex on Monday."],
    // a request of any everyday verb, a rule said as one ("Never ...", "Don't ..."), "us" the user's
    ["Start the dev server please.", "The user asked the assistant to start the dev server."],
    ["Please open the config file.", "The user asked the assistant to open the config file."],
    [
      "Never edit files under src/generated/ by hand.",
      "The user asked the assistant never to edit files under src/generated/ by hand.",
    ],
    ["Don't push to main.", "The user asked the assistant not to push to main."],
    ["Find us a hotel near Alfama.", "The user asked the assistant to find them a hotel near Alfama."],
    ["Start date is Monday.", "Start date is Monday."],
    // a request of another verb states nothing about the user, unless it says a claim of theirs
    ["please cancel my subscription.", null],
    ["Please look at the docs.", null],
    [
      "Please cancel my subscription, I'm moving abroad.",
      "Please cancel the user's subscription, the user is moving abroad.",
    ],
    // a sentence of common words in a regular form reads as English: "my" is the user's
    ["My package never arrived.", "The user's package never arrived."],
  ];
  it.each(cases)("%s", (content, want) => {
    const out = facts([turn(0, "user", content)]);
    expect(out[0]?.text ?? null).toBe(want);
  });

  it("leaves out a courtesy the assistant asks of the user", () => {
    const out = facts([
      turn(0, "user", "Hello."),
      turn(1, "assistant", "Please congratulate Tom for me! Say hi to your mom for me."),
    ]);
    expect(out).toEqual([]);
  });
});

describe("the other speaker, addressed as you", () => {
  const cases: Array<[string, string]> = [
    // "you" as a subject takes the third person
    [
      "I know you always wanted to visit Japan someday.",
      "Bo knows Ana always wanted to visit Japan someday.",
    ],
    [
      "When you finish the painting, send me a photo of it.",
      "When Ana finishes the painting, send Bo a photo of it.",
    ],
    ["I hope you do too, it really helps a lot.", "Bo hopes Ana does too, it really helps a lot."],
    [
      "Just remember why you started this, because you love it!",
      "Bo said: Just remember why Ana started this, because Ana loves it!",
    ],
    [
      "I understand how you feel about the move to Denver.",
      "Bo understands how Ana feels about the move to Denver.",
    ],
    ["If you ever need a ride to the airport, call me.", "If Ana ever needs a ride to the airport, call Bo."],
    [
      "I'll be around all weekend if you need help with the move.",
      "Bo will be around all weekend if Ana needs help with the move.",
    ],
    // "you" as an object, or a past tense, stays as it is
    [
      "I'll call you tomorrow about the concert tickets.",
      "Bo will call Ana tomorrow about the concert tickets.",
    ],
    [
      "So glad you got the support you needed back then.",
      "Bo said: So glad Ana got the support Ana needed back then.",
    ],
    // plural you
    [
      "Must have been scary for you guys, sorry about the accident.",
      "Bo said: Must have been scary for Ana and others, sorry about the accident.",
    ],
    // the other speaker addressed, then "you": the name once
    ["No doubt Ana, you've got this under control.", "Bo said: No doubt Ana has got this under control."],
    // -ed base forms and negative contractions after I
    [
      "I need my family more than ever after the accident.",
      "Bo needs their family more than ever after the accident.",
    ],
    [
      "I haven't done pottery yet, but I'd love to try it.",
      "Bo hasn't done pottery yet, but Bo would love to try it.",
    ],
  ];
  it.each(cases)("%s", (content, want) => {
    const out = facts([
      turn(0, "Ana", "Hello there, how has your week been going?", "Ana"),
      turn(1, "Bo", content, "Bo"),
    ]);
    expect(out.at(-1)?.text).toBe(want);
  });
});

describe("the assistant's courtesies and a name said in passing", () => {
  it("keeps none of the assistant's reactions, and reads a name before 'btw'", () => {
    for (const said of [
      "That's a big milestone!",
      "Noted, I'll keep that in mind.",
      "Of course. Tell me about your experience.",
    ])
      expect(facts([turn(0, "assistant", said)]), said).toEqual([]);
    expect(facts([turn(0, "user", "Hey, I'm Tomás btw, I'm a chef in Porto.")]).map((f) => f.text)).toEqual([
      "The user's name is Tomás.",
      "Tomás is a chef in Porto.",
    ]);
  });
});

describe("a request between two people", () => {
  it("names the other speaker as the one asked, not an assistant", () => {
    const out = facts([
      turn(0, "assistant", "I finished the landscape I told you about.", "Melanie"),
      turn(1, "user", "Check out my painting for the art show!", "Caroline"),
    ]);
    expect(out.at(-1)?.text).toBe("Caroline asked Melanie to check out their painting for the art show!");
    expect(facts([turn(0, "user", "Check out my painting for the art show!")])[0]?.text).toBe(
      "The user asked the assistant to check out their painting for the art show!",
    );
  });
});

describe("one claim per fact: a turn that changes the subject", () => {
  it("splits where the speaker says the subject changes, and only there", () => {
    const out = facts([
      turn(
        0,
        "user",
        "I ran my first marathon in May. It took almost five hours. By the way, my sister is getting married in June!",
      ),
    ]);
    expect(out.map((f) => f.text)).toEqual([
      "The user ran their first marathon in May. It took almost five hours.",
      "The user's sister is getting married in June!",
    ]);
    // Sentences that explain each other stay one fact.
    expect(
      facts([turn(0, "user", "We went camping at the lake. The kids loved the meteor shower.")]),
    ).toHaveLength(1);
  });

  it.each([
    [
      "Oh, and btw - I've been working on my online store.",
      "The user has been working on their online store.",
    ],
    ["Anyway, I adopted a greyhound last week.", "The user adopted a greyhound last week."],
    ["On another note, I started learning Korean.", "The user started learning Korean."],
    ["In other news, I got promoted to team lead.", "The user got promoted to team lead."],
  ])("strips the marker of %s", (second, want) => {
    const out = facts([turn(0, "user", `I finished the marathon in four hours. ${second}`)]);
    expect(out.map((f) => f.text)).toEqual(["The user finished the marathon in four hours.", want]);
  });

  it("gives the question answered to the answer only, not to the new subject", () => {
    const out = facts([
      turn(0, "assistant", "Where did you go on holiday?"),
      turn(1, "user", "We spent two weeks in Crete. By the way, my cat had kittens yesterday."),
    ]);
    expect(out).toHaveLength(2);
    expect(out[0]!.context).toContain("Where did the user go on holiday?");
    expect(out[1]!.context).toBeUndefined();
    expect(out.every((f) => f.source_event_ids[0] === "1")).toBe(true);
  });
});

describe("the assistant's words", () => {
  it("are its claim or advice, never a fact the user stated", () => {
    const out = facts([
      turn(0, "user", "I want to learn a new language this year."),
      turn(1, "assistant", "You might enjoy Spanish, it could be a good first choice for you."),
    ]);
    expect(out.map((f) => f.text)).toEqual([
      "The user wants to learn a new language this year.",
      "The assistant said: The user might enjoy Spanish, it could be a good first choice for the user.",
    ]);
  });
});

describe("what the assistant did for the user", () => {
  const said = (reply: string) =>
    facts([turn(0, "user", "Can you sort this out?"), turn(1, "assistant", reply)])
      .filter((f) => f.source_role === "assistant")
      .map((f) => f.text);
  it.each([
    [
      "I'm sorry about that! I can see the package was delayed at the Memphis hub. I've issued a $15 credit to your account and upgraded shipping to express.",
      "The assistant has issued a $15 credit to the user's account and upgraded shipping to express.",
    ],
    [
      "I've booked a table for two at Nopa on Friday at 7pm under your name.",
      "The assistant has booked a table for two at Nopa on Friday at 7pm under the user's name.",
    ],
    [
      "I'll remind you on June 2, the day before your mom's birthday.",
      "The assistant will remind the user on June 2, the day before the user's mom's birthday.",
    ],
    [
      "I checked your account: you're on the Family plan at $22.99/month, renewing on May 4.",
      "The assistant checked the user's account: the user is on the Family plan at $22.99/month, renewing on May 4.",
    ],
    // What holds in the user's affairs or the code, said in general or on a condition.
    [
      "Generally, your Premium plan includes 2 TB of storage and renews on May 4 at $9.99/month.",
      "The assistant said: Generally, the user's Premium plan includes 2 TB of storage and renews on May 4 at $9.99/month.",
    ],
    [
      "If you run `make test`, it loads docker-compose.test.yml with the test database on port 5433.",
      "The assistant said: If the user runs `make test`, it loads docker-compose.test.yml with the test database on port 5433.",
    ],
    // A completed action reported without naming the user: done in the user's affairs all the same.
    [
      "I have refunded the duplicate charge of $49; it will show up within 5 business days.",
      "The assistant has refunded the duplicate charge of $49; it will show up within 5 business days.",
    ],
    ["I refunded the duplicate charge.", "The assistant refunded the duplicate charge."],
    [
      "I have issued a refund of $49 for the duplicate charge.",
      "The assistant has issued a refund of $49 for the duplicate charge.",
    ],
    ["I've reset your password.", "The assistant has reset the user's password."],
    [
      "I have forwarded the message to your manager.",
      "The assistant has forwarded the message to the user's manager.",
    ],
    [
      "I have escalated this to our billing team.",
      "The assistant has escalated this to the assistant's billing team.",
    ],
    // A dated past done for the user is still an action.
    [
      "Yesterday I escalated your ticket to billing.",
      "The assistant said: Yesterday the assistant escalated the user's ticket to billing.",
    ],
  ])("keeps %s", (reply, want) => {
    expect(said(reply)).toEqual([want]);
  });
  it.each([
    "I'm sorry about that!",
    "I can help with that.",
    "I'll keep that in mind for you.",
    "I hope you enjoy the trip!",
    "I understand how you feel.",
    "I'll let you know.",
    "I've noted your preference.",
    // A courtesy in the past is no action.
    "I've enjoyed helping you today. I'll be here whenever you need me.",
    // Supposing, illustrating, speaking in general, offering: nothing done in the user's affairs.
    "For example, if you flew into Osaka, you could take the train to Kyoto.",
    "If you'd like, I'll book a table at Nopa for Friday at 7pm under your name. Just confirm.",
    "I'll book a table at Nopa for Friday at 7pm under your name if you want.",
    "Generally, customers who restart their router see better speeds.",
    "Suppose you worked nights: you'd need a different schedule.",
    "Say you fly into Osaka: the train to Kyoto takes 15 minutes.",
    "Imagine you had a week in Kyoto with your wife.",
    "E.g. the Shinkansen from Osaka to Kyoto costs about 15 dollars.",
    // The assistant's filler, past or not: nothing done.
    "I understand.",
    "I think the weekend would work better.",
    "I'd recommend the Pro plan.",
    "I'm happy to help.",
    "I hope this helps.",
    "I see.",
    "I was wondering about that too.",
    "I noticed that too.",
    "I realized I misread the question.",
    "I'll look into it.",
    // An action about the assistant's own answer, message or code above: the chat's, no memory.
    "I made a mistake in my previous answer, sorry about that.",
    "I updated my answer above.",
    "I corrected the code above.",
    "I changed my response to use Python.",
    "I apologize, I misread your question.",
    // A life of the assistant's own, dated in the past: not what it did in this exchange.
    "I adopted a beagle named Max from the shelter in March.",
    "I moved to Lisbon last spring.",
    "I learned to play the cello when I was a kid.",
  ])("drops %s", (reply) => {
    expect(said(reply)).toEqual([]);
  });
});

describe("a one-line snippet that completes its sentence", () => {
  it("stays in the fact as code, and its artifact's summary says its lead-in once", () => {
    const said =
      "My go-to bash alias is:\n```bash\nalias gs='git status -sb'\n```\nI use it like 200 times a day.";
    expect(facts([turn(0, "user", said)]).map((f) => f.text)).toEqual([
      "The user's go-to bash alias is: `alias gs='git status -sb'`. The user uses it like 200 times a day.",
    ]);
    const [artifact] = extractArtifacts([turn(0, "user", said)], false);
    expect(artifact).toMatchObject({
      title: "bash snippet: My go-to bash alias is",
      summary: "bash snippet: My go-to bash alias is:",
      content: "alias gs='git status -sb'",
    });
  });
});

describe("an assistant's reaction", () => {
  it.each(["That must be hard to coordinate.", "Maybe try cutting back a little."])("drops %s", (reply) => {
    expect(
      facts([turn(0, "user", "I coordinate three kids' schedules."), turn(1, "assistant", reply)]).filter(
        (f) => f.source_role === "assistant",
      ),
    ).toEqual([]);
  });
  it("keeps advice that names something", () => {
    expect(
      facts([turn(0, "assistant", "Maybe try the Thai place on 5th Street.")]).map((f) => f.text),
    ).toEqual(["The assistant said: Maybe try the Thai place on 5th Street."]);
  });
});

describe("words quoted in the user's message", () => {
  it("keep their 'you': the one spoken to in the quote, not the assistant", () => {
    const out = facts([
      turn(0, "assistant", "How was your week?"),
      turn(1, "user", 'My doctor said "you have high blood pressure, cut down on salt".'),
      turn(2, "user", 'My manager told me "you are the best hire we made" and I was thrilled.'),
    ]).map((f) => f.text);
    expect(out).toEqual([
      'The user\'s doctor said "you have high blood pressure, cut down on salt".',
      'The user\'s manager told the user "you are the best hire we made" and the user was thrilled.',
    ]);
  });
});

describe("the user's name", () => {
  it.each([
    ["Hi, I'm Priya!", "Priya"],
    ["Hello, my name is Jordan and I teach maths.", "Jordan"],
    ["I'm Italian.", null],
    ["I'm going to Paris.", null],
    ["I am Christian.", null],
    // full names, and names WordNet also knows as someone famous or a star sign, after a greeting
    ["Hi, I'm Alice Martin. I live in Paris.", "Alice Martin"],
    ["My name is Alice Martin and I live in Paris.", "Alice Martin"],
    ["Hi, I'm Leo. I work as an architect.", "Leo"],
    ["Hi, I'm German.", null],
    // a member of a people is a given name after a greeting; a follower of a belief or a party
    // member is not
    ["Hi, I'm Maya.", "Maya"],
    ["Hi, I'm Frank.", "Frank"],
    ["Hey, I'm Dakota!", "Dakota"],
    ["Hi, I'm Frank here.", "Frank"],
    ["Hi, I'm Catholic.", null],
    ["Hi, I'm Muslim and I don't drink alcohol.", null],
    ["Hi, I'm Sikh, so please no tobacco-related gift ideas.", null],
    ["Hi, I'm Buddhist and I meditate every morning.", null],
    ["Hi, I'm Lutheran and I sing in the choir.", null],
    ["Hi, I'm Protestant.", null],
    ["Hi, I'm Quaker.", null],
    ["Hi, I'm Democrat and I volunteer for campaigns.", null],
    ["Hi, I'm Christian, a teacher in Leeds.", null],
    ["I'm Buddhist.", null],
    ["You can call me Sam, everyone does.", "Sam"],
    ["Everyone calls me Sam.", "Sam"],
    // a request for a call, a nickname from someone else, someone else introduced
    ["Could you call me Monday about the contract renewal?", null],
    ["Please call me ASAP if the package arrives.", null],
    ["My mom used to call me Bunny when I was little.", null],
    ["This is Bob, my coworker, he will join the call.", null],
    ["This is Max, our dog.", null],
    // a title is no name, nor part of one; a name goes on after "now"
    ["My name is Dr. Ahmed Khan and I work in cardiology.", "Ahmed Khan"],
    ["My name is Mr. Smith.", "Smith"],
    ["Call me Sam now.", "Sam"],
    ["Please call me Sam from now on.", "Sam"],
    ["Hi, I'm José, I play guitar in a band.", "José"],
    // a word only ever an adjective is how the speaker is, unless a greeting or a description says
    // it is a name; a name that is also a noun stays one
    ["I'm Sorry, I forgot to mention it.", null],
    ["I'm Happy to help.", null],
    ["Hi, I'm Sunny!", "Sunny"],
    // "I go by" names the user; going by bus does not
    ["Please don't call me Bob, I go by Robert.", "Robert"],
    ["I go by bus to work.", null],
    ["I'm Olive, I run the bakery.", "Olive"],
    // a description said as a second claim; "<name> here." opening the message
    ["I'm Dana and I'm 34.", "Dana"],
    ["I'm Sorry and I'm a bit late.", null],
    ["Dana here.", "Dana"],
    ["Hi, Dana here, I just moved to Leeds.", "Dana"],
    ["Snow here.", null],
    ["Sunny here today!", null],
  ])("reads %s as %s", (content, want) => {
    expect(introducedName(content)).toBe(want);
  });

  it("records a self-introduction as a profile fact, and facts read with the name", () => {
    const out = facts([
      turn(0, "user", "Hi, I'm Priya and I work as a nurse in Leeds."),
      turn(1, "assistant", "Nice to meet you! Do you like it there?"),
      turn(2, "user", "I love it, my flat is near the river."),
    ]);
    expect(out.map((f) => f.text)).toEqual([
      "The user's name is Priya.",
      "Priya works as a nurse in Leeds.",
      "Priya loves it, Priya's flat is near the river.",
    ]);
    // "the user" stays searchable beside the name.
    expect(out[1]!.context).toContain("the user");
  });

  it("leaves the rest of an introduction with a full name as the fact", () => {
    expect(
      facts([turn(0, "user", "My name is Alice Martin and I live in Paris.")]).map((f) => f.text),
    ).toEqual(["The user's name is Alice Martin.", "Alice Martin lives in Paris."]);
  });

  it("takes the introduction out whole, names ending in any letter and titles too", () => {
    const texts = (content: string) => facts([turn(0, "user", content)]).map((f) => f.text);
    expect(texts("My name is Dr. Ahmed Khan and I work in cardiology.")).toEqual([
      "The user's name is Ahmed Khan.",
      "Ahmed Khan works in cardiology.",
    ]);
    expect(texts("Hi, I'm José, I play guitar in a band.")).toEqual([
      "The user's name is José.",
      "José plays guitar in a band.",
    ]);
    expect(texts("My name is André and I'm a chef.")).toEqual([
      "The user's name is André.",
      "André is a chef.",
    ]);
    expect(texts("I'm French, and my name is Amélie.")).toEqual([
      "The user's name is Amélie.",
      "Amélie is French.",
    ]);
    expect(texts("Call me Sam now.")).toEqual(["The user's name is Sam."]);
    expect(texts("Call me Sam now, I work at Google.")).toEqual([
      "The user's name is Sam.",
      "Sam works at Google.",
    ]);
    // ... and what joined or greeted it
    expect(texts("Hi I'm Rose, I'm a florist in Leeds.")).toEqual([
      "The user's name is Rose.",
      "Rose is a florist in Leeds.",
    ]);
    expect(texts("Hi there, I'm Priya and I love tea.")).toEqual([
      "The user's name is Priya.",
      "Priya loves tea.",
    ]);
    expect(texts("Hi, I'm Frank here.")).toEqual(["The user's name is Frank."]);
    // "here" goes with the name, and the rest keeps its subject
    expect(texts("Hi, I'm Frank here, need help with my taxes.")).toEqual([
      "The user's name is Frank.",
      "Frank needs help with their taxes.",
    ]);
    // a belief after a greeting is no name, and stays the user's
    expect(texts("Hi, I'm Muslim and I don't drink alcohol.")).toEqual([
      "The user is Muslim and the user doesn't drink alcohol.",
    ]);
    expect(texts("Hi, I'm Catholic.")).toEqual(["The user is Catholic."]);
    expect(texts("Don't call me Robert, call me Rob.")).toEqual([
      "The user's name is Rob.",
      "Don't call Rob Robert.",
    ]);
  });

  it("reads a user named on record as the chat's user: a dropped subject put back, a short answer kept", () => {
    const out = facts(
      [
        turn(0, "user", "Went to the dentist yesterday."),
        turn(1, "assistant", "How old is your daughter now?"),
        turn(2, "user", "She is 7."),
      ],
      "Dana",
    );
    expect(out.map((f) => f.text)).toEqual(["Dana went to the dentist yesterday.", "She is 7 years old."]);
  });

  it("uses a name on record for later turns", () => {
    expect(facts([turn(0, "user", "I ran my first 10k race this morning.")], "Priya")[0]!.text).toBe(
      "Priya ran their first 10k race this morning.",
    );
  });
});

describe("concept expansion (WordNet)", () => {
  it("reaches a category from an instance, bounded", () => {
    expect(expandWord("cello")).toContain("musical instrument");
    expect(expandWord("greyhound")).toContain("dog");
    expect(expandWord("vegan")).toContain("vegetarian");
    // Kinship words bring "family": WordNet files them under "relative", "family" under groups.
    for (const w of ["kids", "children", "son", "wife", "grandpa", "parents"])
      expect(expandWord(w), w).toContain("family");
    for (const w of ["friend", "colleague", "family"]) expect(expandWord(w), w).not.toContain("family");
    for (const w of ["cello", "greyhound", "salmon", "jeans"])
      expect(expandWord(w).length).toBeLessThanOrEqual(8);
  });

  it("gives an illness, an injury or a pain the words a health question uses, not a word mostly an adjective", () => {
    for (const w of ["diabetes", "asthma", "migraine", "fracture", "insomnia"])
      expect(expandWord(w), w).toEqual(expect.arrayContaining(["illness", "health condition"]));
    for (const w of ["cold", "cello", "nurse", "book"]) expect(expandWord(w), w).not.toContain("illness");
    // Only the medical sense of "disorder", "pain" or "injury": a stir is a disturbance of the
    // peace, a nuisance a pain, a wrong done an injury, and none is an illness.
    for (const w of ["stir", "commotion", "riot", "nuisance", "mess"])
      expect(expandWord(w), w).not.toContain("illness");
    for (const w of ["sprain", "concussion", "fever", "flu", "allergy", "whiplash", "rash"])
      expect(expandWord(w), w).toEqual(expect.arrayContaining(["illness", "health condition"]));
  });

  it("reaches an animal from its young, read from the young one's definition", () => {
    const kinds: [string, string][] = [
      ["kitten", "cat"],
      ["foal", "horse"],
      ["colt", "horse"], // "a young male horse under the age of four"
      ["piglet", "pig"],
      ["calf", "cattle"], // "young of domestic cattle"
      ["gosling", "goose"],
      ["kittens", "cat"],
    ];
    for (const [young, kind] of kinds) expect(expandWord(young), young).toContain(kind);
    // "young of any of various canines" names no one animal; a kid is a young person, not an animal.
    expect(expandWord("pup")).not.toContain("any");
    expect(expandWord("kid")).not.toContain("person");
    expect(conceptTerms("We adopted a kitten this morning.")).toContain("cat");
    // A breed is a dog to WordNet, and a dog is a pet (everyday kinds, reached through it).
    for (const breed of ["golden retriever", "beagle", "greyhound"])
      expect(conceptTerms(`We have a ${breed} called Mango.`), breed).toEqual(
        expect.arrayContaining(["dog", "pet", "pets"]),
      );
    expect(conceptTerms("I work as a pharmacist in Phoenix.")).toEqual(
      expect.arrayContaining(["job", "occupation"]),
    );
  });

  it("leaves out common, ambiguous, verb-like and abstract words and names", () => {
    for (const w of ["time", "play", "thing", "spending", "seeing", "week", "two", "ate"])
      expect(expandWord(w), w).toEqual([]);
    // The names bring nothing; "met" brings only its base form (irregular verbs, below).
    expect(conceptTerms("Rose met Mark")).toEqual(["meet"]);
  });

  it("indexes the base form of an irregular verb beside the form written", () => {
    // "What did Caroline buy?" never reached "Caroline bought ...": the stemmer strips endings only.
    expect(conceptTerms("Last week Caroline bought a bike and went to the lake.")).toEqual(
      expect.arrayContaining(["buy", "go"]),
    );
    expect(conceptTerms("Jon chose them 'cause they help, and he has written it down.")).toEqual(
      expect.arrayContaining(["choose", "write"]),
    );
    expect(conceptTerms("Her child loves the zoo.")).toContain("children");
    expect(conceptTerms("The children built a sandcastle.")).toEqual(
      expect.arrayContaining(["child", "build"]),
    );
    // A name is no verb form ("Rose"), and forms that are as often other words are left alone.
    expect(conceptTerms("Rose left the ground floor.")).not.toEqual(expect.arrayContaining(["rise"]));
    expect(conceptTerms("Rose left the ground floor.")).not.toEqual(expect.arrayContaining(["leave"]));
  });

  it("reads chat words as their standard words, not WordNet's other senses", () => {
    const terms = conceptTerms("Here's a pic of my kids with my mum on her bday.");
    expect(terms).toEqual(expect.arrayContaining(["photo", "child", "children", "mother", "birthday"]));
    // WordNet's "pic" is a movie and its "mum" a chrysanthemum.
    expect(terms).not.toContain("movie");
    expect(terms).not.toContain("chrysanthemum");
  });

  it("gives a place name the kinds of place it is, and only a name that is first of all a place", () => {
    expect(conceptTerms("Took a short trip last week to Chicago.")).toContain("city");
    expect(conceptTerms("I moved here from Sweden 4 years ago.")).toContain("country");
    expect(conceptTerms("We hiked near Fort Wayne and drove to North Carolina.")).toEqual(
      expect.arrayContaining(["city", "state"]),
    );
    expect(placeKinds("Michigan")).toContain("american state");
    // A queen, a river and the dawn before they are places; a lower-case word is no name.
    for (const w of ["Victoria", "Jordan", "Aurora", "chicago"]) expect(placeKinds(w), w).toEqual([]);
  });

  it("gives a quoted title the kinds of work the words around it say it is", () => {
    const cases: [string, string[]][] = [
      ['Tim saw that John had "The Alchemist" on his bookshelf.', ["book"]],
      ["Nate is playing this awesome fantasy RPG called \u201cXenoblade Chronicles\u201d.", ["game"]],
      ['Joanna watched "Eternal Sunshine of the Spotless Mind" last night.', ["movie", "film"]],
      ['Melanie loves listening to "The Four Seasons" by Vivaldi.', ["song", "music"]],
      [
        'Tim is excited for a new show called "The Wheel of Time", based on a book series he loves.',
        ["book", "show"],
      ],
      // No title (lower case, or no quotes), or a title with nothing saying what it is.
      ['She said "hello" and read a book.', []],
      ["John read The Hobbit twice.", []],
      ['The sign said "Closed for winter".', []],
    ];
    for (const [text, kinds] of cases) expect(titleKinds(text), text).toEqual(kinds);
    // Indexed beside the text's own words, never repeating them.
    expect(conceptTerms('Tim saw that John had "The Alchemist" on his bookshelf.')).toContain("book");
    expect(conceptTerms('Tim read the book "The Alchemist".').filter((t) => t === "book")).toEqual([]);
  });
});

describe("the context block and episode titles read cleanly", () => {
  const row = (type: MemoryRow["type"], text: string, details: Record<string, unknown>): MemoryRow =>
    ({ id: text, type, text, details, created_at: new Date("2026-01-01T00:00:00Z") }) as MemoryRow;

  it("shows a fact's day once: the line's date, not again at the head of its text", () => {
    const block = composeDeterministic([
      row("fact", "On 10 January 2025, the user moved to Berlin.", { occurred_at: "2025-01-10T09:00:00Z" }),
      row("fact", "On 3 March 2024, the user lived in Paris.", { occurred_at: "2025-02-01T00:00:00Z" }),
    ]);
    expect(block).toContain("- 2025-01-10: The user moved to Berlin.");
    // a day other than the line's stays in the text
    expect(block).toContain("- 2025-02-01: On 3 March 2024, the user lived in Paris.");
  });

  it("shows an episode's day once: left out of each of its sentences that the line's date leads", () => {
    const block = composeDeterministic([
      row(
        "episode",
        "On 8 May 2023, Caroline went to a support group yesterday (7 May 2023). On 8 May 2023, Melanie painted a sunrise. On 9 May 2023, Melanie ran a charity race.",
        { title: "Conversation between Caroline and Melanie", date: "1:56 pm on 8 May, 2023" },
      ),
    ]);
    expect(block).toContain(
      "- 2023-05-08: **Conversation between Caroline and Melanie**: Caroline went to a support group yesterday (7 May 2023). Melanie painted a sunrise. On 9 May 2023, Melanie ran a charity race.",
    );
  });

  it("gives no line to a copy of a line above, nor to an episode left with its title alone", () => {
    const block = composeDeterministic([
      row("lesson", 'When "npm ERR! code ERESOLVE" occurs: Run npm install --legacy-peer-deps.', {}),
      row("fact", "The assistant said: Run `npm install --legacy-peer-deps`.", {}),
      row("fact", "The user prefers detailed answers.", {}),
      row("episode", "The user prefers detailed answers.", { title: "Conversation" }),
      row("episode", "Conversation", { title: "Conversation" }),
      row("fact", "The user is allergic to fish.", {}),
    ]);
    expect(block.match(/legacy-peer-deps/g)).toHaveLength(1);
    expect(block.match(/prefers detailed answers/g)).toHaveLength(1);
    expect(block).not.toContain("### Episodes");
    expect(block).toContain("allergic to fish");
  });

  it("reads a message date as the chat export wrote it, so the day shows once there too; an unreadable one is not shown", () => {
    // The README's ingest example: a live message dated "1:56 pm on 8 May, 2023".
    const block = composeDeterministic([
      row("fact", "On 8 May 2023, Caroline went to a support group yesterday (7 May 2023).", {
        date: "1:56 pm on 8 May, 2023",
      }),
      row("fact", "The user likes tea.", { date: "not a date" }),
    ]);
    expect(block).toContain("- 2023-05-08: Caroline went to a support group yesterday (7 May 2023).");
    // A date that cannot be read is never printed as sent: the line shows the day it was stored.
    expect(block).toContain("- 2026-01-01: The user likes tea.");
    expect(block).not.toContain("not a date");
  });

  it("writes 'the' lower case after a leading day, and titles no conversation by its dates", () => {
    const dated = (i: number, content: string) => datedTurn(new Date("2025-06-01T10:00:00Z"), content, i);
    const ex = extraction([
      dated(0, "The garden is full of tomatoes in summer."),
      dated(1, "The tomatoes need water every evening."),
    ]);
    expect(ex.facts[0]!.text).toBe("On 1 June 2025, the garden is full of tomatoes in summer.");
    expect(ex.episode.title).toBe("Conversation about tomatoes");
  });

  it("titles a conversation of one named speaker 'with' them, of several 'between' them", () => {
    const title = (turns: Turn[], userName?: string) =>
      extraction(turns, userName).episode.title.replace(/ about .*/, "");
    expect(
      title([turn(0, "user", "Hi, I am Alice."), turn(1, "user", "I grow orchids on my balcony.")]),
    ).toBe("Conversation with Alice");
    expect(title([turn(0, "user", "I grow orchids on my balcony.")], "Alice")).toBe(
      "Conversation with Alice",
    );
    expect(title([turn(0, "user", "I grow orchids on my balcony.", "Alice")])).toBe(
      "Conversation with Alice",
    );
    expect(
      title([turn(0, "user", "I grow orchids.", "Alice"), turn(1, "assistant", "I grow tomatoes.", "Bob")]),
    ).toBe("Conversation between Alice and Bob");
  });
});

describe("named speakers, dates and categories", () => {
  it("reads a weekday of the assistant's reply by the reply's own tense, not by the 'said' it is given", () => {
    const wed = new Date("2025-01-08T12:00:00Z");
    const said = (role: string, content: string) =>
      extraction([{ ...datedTurn(wed, content), role }]).facts.map((f) => f.text);
    // A plan for Saturday, from the assistant as from the user, is no past Saturday.
    expect(said("assistant", "A quick pasta on Saturday works well.")).toEqual([
      "On 8 January 2025, the assistant said: A quick pasta on Saturday works well.",
    ]);
    expect(said("user", "A quick pasta on Saturday works well.")).toEqual([
      "On 8 January 2025, a quick pasta on Saturday works well.",
    ]);
    // A clause in the past still means the Saturday before.
    expect(said("assistant", "We went there on Saturday and it was great.")).toEqual([
      "On 8 January 2025, the assistant and others went there on Saturday (4 January 2025) and it was great.",
    ]);
  });

  it("a named speaker's self-introduction leaves the fact (no 'Dave is Dave ...')", () => {
    const said = "Hey! I am Dave, I just adopted a cat called Miso.";
    expect(facts([turn(0, "user", said, "Dave")]).map((f) => f.text)).toEqual([
      "Dave just adopted a cat called Miso.",
    ]);
    expect(facts([turn(0, "Dave", said, "Dave")]).map((f) => f.text)).toEqual([
      "Dave just adopted a cat called Miso.",
    ]);
    // Accents aside: "Zoë" introducing herself as "Zoe", and "Jose" as "José".
    for (const [speaker, typed] of [
      ["Zoë", "Zoe"],
      ["Jose", "José"],
    ] as const)
      expect(
        facts([turn(0, speaker, `Hey! I am ${typed}, I just adopted a cat called Miso.`, speaker)]).map(
          (f) => f.text,
        ),
        typed,
      ).toEqual([`${speaker} just adopted a cat called Miso.`]);
    // A form's name field giving the speaker's full name: the full name speaks, said once.
    expect(
      facts([turn(0, "Jordan", "Name: Jordan Lee. I just started at Stripe as a PM.", "Jordan")]).map(
        (f) => f.text,
      ),
    ).toEqual(["Jordan Lee just started at Stripe as a PM."]);
  });

  it("resolves a thing due in a while and this weekend, and writes a leading relative date lower case", () => {
    const text = (content: string) => datedText(new Date("2024-07-03T12:00:00Z"), content); // a Wednesday
    expect(text("Last Tuesday I went hiking with my brother.")).toBe(
      "On 3 July 2024, last Tuesday (2 July 2024) the user went hiking with their brother.",
    );
    expect(text("Two days ago I adopted a greyhound.")).toBe(
      "On 3 July 2024, two days ago (1 July 2024) the user adopted a greyhound.",
    );
    expect(text("My birthday is in three months.")).toBe(
      "On 3 July 2024, the user's birthday is in three months (October 2024).",
    );
    expect(text("We are going camping this weekend.")).toBe(
      "On 3 July 2024, the user and others are going camping this weekend (the weekend of 6 July 2024).",
    );
    // How long something took is no date.
    expect(text("The tree grew a lot in a year.")).toBe("On 3 July 2024, the tree grew a lot in a year.");
    expect(text("I'm flying to Seoul the day after tomorrow.")).toBe(
      "On 3 July 2024, the user is flying to Seoul the day after tomorrow (5 July 2024).",
    );
    expect(text("I got back from Rome the day before yesterday.")).toBe(
      "On 3 July 2024, the user got back from Rome the day before yesterday (1 July 2024).",
    );
    expect(text("I start my new job in 5 days.")).toBe(
      "On 3 July 2024, the user starts their new job in 5 days (8 July 2024).",
    );
    expect(text("I have a dentist appointment in three weeks.")).toBe(
      "On 3 July 2024, the user has a dentist appointment in three weeks (the week of 24 July 2024).",
    );
  });

  it("files a command as technology and only a run that is exercise as sports", () => {
    const cats = (content: string) => facts([turn(0, "user", content)])[0]?.categories;
    expect(cats("Always run npm run lint before git push.")).toEqual(["technology"]);
    expect(cats("I was running the migrations all night.")).not.toContain("sports");
    expect(cats("I went for a run along the river this morning.")).toContain("sports");
    expect(cats("I have been running every day since March.")).toContain("sports");
  });
});

describe("openers, labels and introductions a chat puts before a claim", () => {
  const texts = (content: string) => facts([turn(0, "user", content)]).map((f) => f.text);
  it("leaves out a label with a word before it, a comma after also/plus, and chat laughter", () => {
    expect(texts("Quick update: I live in Denver now.")).toEqual(["The user lives in Denver now."]);
    expect(texts("Random fact: my sister is getting married in June.")).toEqual([
      "The user's sister is getting married in June.",
    ]);
    // A change of plan announced, and a label after a dash or before a comma, are labels too.
    for (const [content, text] of [
      [
        "Change of plan: we are going to Rome instead of Paris.",
        "The user and others are going to Rome instead of Paris.",
      ],
      ["Change of plans, we are going to Rome.", "The user and others are going to Rome."],
      ["Slight change of plans: I'm flying on Friday.", "The user is flying on Friday."],
      [
        "Plot twist: my sister is moving in with us.",
        "The user's sister is moving in with the user and others.",
      ],
      ["Quick update - I moved to Berlin.", "The user moved to Berlin."],
      ["Quick update \u2014 I moved to Berlin.", "The user moved to Berlin."],
      ["Quick update, I moved to Berlin.", "The user moved to Berlin."],
      ["Big change: I quit my job.", "The user quit their job."],
      ["Update: I got the job at Stripe.", "The user got the job at Stripe."],
      ["FYI: my flight is on Tuesday.", "The user's flight is on Tuesday."],
      ["Good news! I passed the exam.", "The user passed the exam."],
      ["Heads up: I'll be offline next week.", "The user will be offline next week."],
      ["PS: I love sushi.", "The user loves sushi."],
      // With an article before it, and a change of heart.
      ["A big change: I'm moving to Berlin.", "The user is moving to Berlin."],
      ["A slight change of heart - I actually like jazz now.", "The user actually likes jazz now."],
      // A note to self is the user's own, no request to the assistant.
      ["Note to self: never deploy on Fridays.", "The user's note to self: never deploy on Fridays."],
      ["Reminder to myself - call mom on Sunday.", "The user's reminder to self: call mom on Sunday."],
      // Each age of a labelled list reads as an age.
      ["Kids: Noah is 9 and Mia is 6.", "Kids: Noah is 9 years old and Mia is 6 years old."],
      // ... of people: a thing a common word names has a version, not an age.
      ["Versions: Node is 24 and Python is 3.", "Versions: Node is 24 and Python is 3."],
    ])
      expect(texts(content!), content).toEqual([text]);
    // A noun phrase before a colon that is no label is what the line is about.
    expect(texts("Family plan: 40 dollars a month.")).toEqual(["Family plan: 40 dollars a month."]);
    expect(texts("Also, I have a dentist appointment soon.")).toEqual([
      "The user has a dentist appointment soon.",
    ]);
    expect(texts("Plus, my son Max starts school in September.")).toEqual([
      "The user's son Max starts school in September.",
    ]);
    expect(texts("Lol my cat knocked over the plant again.")).toEqual([
      "The user's cat knocked over the plant again.",
    ]);
    // A reaction to what was said is no fact; a noun before a colon is the claim's subject.
    expect(texts("Ha, I didn't know that at all.")).toEqual([]);
    expect(texts("I didn't know that Rust was this fast.")).toHaveLength(1);
    expect(texts("My favourite thing: pizza with olives on top.")).toEqual([
      "The user's favourite thing: pizza with olives on top.",
    ]);
  });

  it("keeps the description after an introduced name as the speaker's", () => {
    expect(texts("Hi! I'm Priya, a pediatric nurse in Austin.")).toEqual([
      "The user's name is Priya.",
      "Priya is a pediatric nurse in Austin.",
    ]);
    expect(texts("I'm Bob, a backend engineer at Shopify. I mostly write Go.")).toEqual([
      "The user's name is Bob.",
      "Bob is a backend engineer at Shopify. Bob mostly writes Go.",
      // Where Bob works, alone too: a later "I joined Cloudflare" supersedes it.
      "Bob is a backend engineer at Shopify.",
    ]);
    // An age after the name is one: a name WordNet also knows (Dana) is still introduced.
    expect(texts("I'm Dana, 34, from Chicago.")).toEqual([
      "The user's name is Dana.",
      "Dana is 34 years old, from Chicago.",
    ]);
    expect(texts("I'm Italian, from Rome.")).toEqual(["The user is Italian, from Rome."]);
    // ... and as a second claim; "Dana here." names the writer and says nothing more
    expect(texts("I'm Dana and I'm 34.")).toEqual(["The user's name is Dana.", "Dana is 34 years old."]);
    expect(texts("Dana here.")).toEqual(["The user's name is Dana."]);
    expect(texts("Hi, Dana here, I just moved to Leeds.")).toEqual([
      "The user's name is Dana.",
      "Dana just moved to Leeds.",
    ]);
  });

  it("splits no sentence at an abbreviation, a dotted initialism or a month before its day", () => {
    expect(
      splitSentences(
        "I work for the U.S. Postal Service in St. Louis. My shift starts at 7:30 a.m. Every day.",
      ),
    ).toEqual([
      "I work for the U.S. Postal Service in St. Louis.",
      "My shift starts at 7:30 a.m. Every day.",
    ]);
    expect(splitSentences("My appointment is on Jan. 5 at 10 a.m. With Dr. Kim.")).toHaveLength(1);
    expect(splitSentences("It was Acme Inc. Last week they called.")).toHaveLength(1);
    expect(splitSentences("No. I did not go.")).toEqual(["No.", "I did not go."]);
    expect(facts([turn(0, "user", "I work for the U.S. Postal Service.")]).map((f) => f.text)).toEqual([
      "The user works for the U.S. Postal Service.",
    ]);
  });

  it("leaves 'you' as said among three speakers or more, and gives it the other one between two", () => {
    const group = (...said: Array<[string, string]>) =>
      facts(said.map(([who, content], i) => turn(i, who, content, who))).map((f) => f.text);
    expect(
      group(
        ["Alice", "I just got back from Lisbon."],
        ["Bob", "Nice, I went there in 2019 with my wife."],
        ["Chen", "I heard you loved the pastel de nata there."],
      ),
    ).toContain("Chen heard you loved the pastel de nata there.");
    expect(
      group(
        ["Alice", "I just got back from Lisbon."],
        ["Chen", "I heard you loved the pastel de nata there."],
      ),
    ).toContain("Chen heard Alice loved the pastel de nata there.");
  });

  it("puts back the subject the user's chat drops, and lowers a leading word after the day", () => {
    const texts = (content: string) => facts([turn(0, "user", content)]).map((f) => f.text);
    expect(texts("went to the dentist yesterday, he said my teeth are fine")).toEqual([
      "The user went to the dentist yesterday, he said the user's teeth are fine",
    ]);
    expect(texts("Finished my thesis draft last night!")).toEqual([
      "The user finished their thesis draft last night!",
    ]);
    expect(texts("Excited for the trip to Rome next week.")).toEqual([
      "The user is excited for the trip to Rome next week.",
    ]);
    // An imperative, a participle read as an adjective, a reaction to the other: as said.
    expect(texts("Read the docs before you start the migration.")).toEqual([
      "Read the docs before you start the migration.",
    ]);
    expect(texts("Based on the forecast, the picnic moves to Sunday.")[0]).toMatch(/^Based on the forecast/);
    // A named speaker's fact already says whose it is.
    expect(facts([turn(0, "Caroline", "Took a short trip to Rome last week.", "Caroline")])[0]!.text).toBe(
      "Caroline said: Took a short trip to Rome last week.",
    );
    expect(datedText(new Date("2025-03-05T09:00:00Z"), "On Monday my sister visited us.")).toBe(
      "On 5 March 2025, on Monday (3 March 2025) the user's sister visited the user and others.",
    );
  });

  it("writes the first word after the day in lower case unless it is 'I' or a name", () => {
    const text = (content: string) => datedText(new Date("2024-04-10T12:00:00Z"), content);
    expect(text("If my sister calls, I'm out.")).toBe(
      "On 10 April 2024, if the user's sister calls, the user is out.",
    );
    expect(text("Moving to Denver was the best decision.")).toBe(
      "On 10 April 2024, moving to Denver was the best decision.",
    );
    expect(text("Finally signed the lease on the flat.")).toBe(
      "On 10 April 2024, the user finally signed the lease on the flat.",
    );
    // A common noun or adjective may be a name, a brand or a month: it keeps its capital.
    expect(text("Blue used to be my favorite color but now it's green.")).toBe(
      "On 10 April 2024, Blue used to be the user's favorite color but now it's green.",
    );
    for (const [said, kept] of [
      ["Mark called me about the lease.", "Mark called the user about the lease."],
      ["Ruby should never eat grapes.", "Ruby should never eat grapes."],
      ["Earl Grey is my favorite tea.", "Earl Grey is the user's favorite tea."],
      ["Amber and Sunny came over for dinner.", "Amber and Sunny came over for dinner."],
      ["Apple replaced my laptop battery.", "Apple replaced the user's laptop battery."],
      ["March was a busy month for me.", "March was a busy month for the user."],
      ["May is when my sister gets married.", "May is when the user's sister gets married."],
      ...["Bill", "Jack", "Daisy", "Ivy", "Grace", "Hunter", "Penny", "Mom", "Target", "Chase", "August"].map(
        (name) => [`${name} sent me a card.`, `${name} sent the user a card.`],
      ),
    ])
      expect(text(said!)).toBe(`On 10 April 2024, ${kept}`);
    // A name WordNet has, one it lacks, one the input writes inside a sentence, capitals
    expect(text("Paris was amazing in the spring.")).toBe(
      "On 10 April 2024, Paris was amazing in the spring.",
    );
    expect(text("Priya called me about the lease.")).toBe(
      "On 10 April 2024, Priya called the user about the lease.",
    );
    expect(text("NASA launched a rocket I watched.")).toBe(
      "On 10 April 2024, NASA launched a rocket the user watched.",
    );
    expect(
      extraction([
        datedTurn(new Date("2024-04-10T12:00:00Z"), "Will said he would drive me to the airport."),
        datedTurn(new Date("2024-04-10T12:00:00Z"), "I thanked Will for the ride.", 1),
      ]).facts[0]!.text,
    ).toBe("On 10 April 2024, Will said he would drive the user to the airport.");
    // ... and an opener or pictograph before the claim leaves the subject to supply
    expect(text("🎉🎉 Just got engaged to Chris!!! 💍")).toBe(
      "On 10 April 2024, the user just got engaged to Chris!!! 💍",
    );
    expect(text("TL;DR: the move went fine.")).toBe("On 10 April 2024, the move went fine.");
  });

  it("resolves a weekday alone by the sentence's tense", () => {
    const text = (content: string) => datedText(new Date("2025-03-05T09:00:00Z"), content); // a Wednesday
    expect(text("I have a job interview this Friday.")).toBe(
      "On 5 March 2025, the user has a job interview this Friday (7 March 2025).",
    );
    expect(text("My mom arrives on Monday.")).toBe(
      "On 5 March 2025, the user's mom arrives on Monday (10 March 2025).",
    );
    expect(text("I went hiking on Monday with Tom.")).toBe(
      "On 5 March 2025, the user went hiking on Monday (3 March 2025) with Tom.",
    );
    expect(text("My daughter Linh visits in two weeks.")).toBe(
      "On 5 March 2025, the user's daughter Linh visits in two weeks (the week of 19 March 2025).",
    );
    // Each weekday by its own sentence, every one of them.
    expect(text("I saw my therapist on Tuesday. I have a job interview next week.")).toBe(
      "On 5 March 2025, the user saw their therapist on Tuesday (4 March 2025). The user has a job interview next week (the week after 5 March 2025).",
    );
    expect(text("I called my mom on Friday and on Sunday.")).toBe(
      "On 5 March 2025, the user called their mom on Friday (28 February 2025) and on Sunday (2 March 2025).",
    );
    // A list of days is a schedule.
    expect(text("I switched my running to Monday, Wednesday and Friday mornings.")).toBe(
      "On 5 March 2025, the user switched their running to Monday, Wednesday and Friday mornings.",
    );
    // Habits and a day named without a tense stay as said.
    expect(text("We play chess every Monday.")).toBe(
      "On 5 March 2025, the user and others play chess every Monday.",
    );
    expect(text("I love Sundays at the lake.")).toBe("On 5 March 2025, the user loves Sundays at the lake.");
    // A feeling in -ed is no past tense: it looks ahead to the day.
    expect(text("Excited for Friday!")).toBe(
      "On 5 March 2025, the user is excited for Friday (7 March 2025)!",
    );
    expect(text("I'm scared about the surgery on Thursday.")).toBe(
      "On 5 March 2025, the user is scared about the surgery on Thursday (6 March 2025).",
    );
    // An appointment told in the past tense is behind.
    expect(text("I had a job interview at Google on Tuesday.")).toBe(
      "On 5 March 2025, the user had a job interview at Google on Tuesday (4 March 2025).",
    );
    expect(text("I was so excited on Saturday.")).toBe(
      "On 5 March 2025, the user was so excited on Saturday (1 March 2025).",
    );
    // ... but one got, moved to or due on a day is ahead, whatever else the sentence tells as past.
    expect(text("I finally got an appointment with the dermatologist on Monday.")).toBe(
      "On 5 March 2025, the user finally got an appointment with the dermatologist on Monday (10 March 2025).",
    );
    expect(text("My job interview was rescheduled to Friday.")).toBe(
      "On 5 March 2025, the user's job interview was rescheduled to Friday (7 March 2025).",
    );
    expect(text("I got a call from HR, my interview is on Friday.")).toBe(
      "On 5 March 2025, the user got a call from HR, the user's interview is on Friday (7 March 2025).",
    );
    // An event named on a day without a verb, or a thing that is on a day, is ahead too.
    expect(text("Dentist on Tuesday, and my daughter's recital is Thursday at 6.")).toBe(
      "On 5 March 2025, Dentist on Tuesday (11 March 2025), and the user's daughter's recital is Thursday (6 March 2025) at 6.",
    );
    expect(text("My birthday is Saturday!")).toBe(
      "On 5 March 2025, the user's birthday is Saturday (8 March 2025)!",
    );
    // Habits, ordinals and lists of days are no dates; a title is no "tomorrow".
    expect(text("I swim on Thursday evenings.")).toBe(
      "On 5 March 2025, the user swims on Thursday evenings.",
    );
    expect(text("I run Monday Wednesday Friday.")).toBe(
      "On 5 March 2025, the user runs Monday Wednesday Friday.",
    );
    expect(text("I'm reading Tomorrow, and Tomorrow, and Tomorrow by Gabrielle Zevin.")).toBe(
      "On 5 March 2025, the user is reading Tomorrow, and Tomorrow, and Tomorrow by Gabrielle Zevin.",
    );
    expect(text("We went camping last weekend.")).toBe(
      "On 5 March 2025, the user and others went camping last weekend (the weekend of 1 March 2025).",
    );
  });
});

describe("what an assistant says, and how a sentence starts", () => {
  const texts = (...said: Array<[string, string]>) =>
    facts(said.map(([role, content], i) => turn(i, role, content))).map((f) => f.text);
  it("keeps no verdict of the assistant's on what was said, but keeps what it tells", () => {
    expect(
      texts(
        ["user", "We got two kittens, Miso and Tofu!"],
        ["assistant", "Miso and Tofu are adorable names. Cats are great companions."],
      ),
    ).toEqual(["The user and others got two kittens, Miso and Tofu!"]);
    expect(texts(["assistant", "Ottawa is a lovely city. Makes sense, it's quieter than Toronto."])).toEqual(
      [],
    );
    for (const said of [
      "Understood, I will avoid fish in suggestions.",
      "Important to know, thanks.",
      "A dinosaur party could be fun!",
      "Seattle has great Thai food!",
      // wishes, reactions and verdicts of a chat assistant
      "Happy belated birthday to Theo!",
      "Ballard has a great neighborhood feel.",
      "Khao soi is delicious.",
      "Fingers crossed for you!",
      "So glad to hear it.",
      "Sounds like a plan.",
      "Worth it, I'm sure.",
      "Enjoy the trip!",
    ])
      expect(texts(["assistant", said]), said).toEqual([]);
    expect(texts(["assistant", "The capital of Australia is Canberra."])).toEqual([
      "The assistant said: The capital of Australia is Canberra.",
    ]);
  });

  it.each([
    // A generic verdict on a kind, a place or a thing, with or without a subject: dropped.
    ["Beagles are very loyal.", false],
    ["Austin summers are intense.", false],
    ["Tea is a fun rabbit hole.", false],
    ["Pandas are a hit with kids.", false],
    ["Sushi is a real treat.", false],
    ["Perfect for road trips.", false],
    ["Always good to repeat.", false],
    ["Sounds ideal for the kids.", false],
    ["Looks perfect for a picnic.", false],
    ["A nice weekend ritual.", false],
    // Advice with specifics, the assistant's doing in the user's affairs, facts with numbers,
    // anything said of the user: kept.
    ["Perfect for road trips, the Outback seats 5.", true],
    ["Try the Thai place on 5th Street, it's great.", true],
    ["I've booked your table at Nopa for 7 pm.", true],
    ["Beagles need about an hour of exercise a day.", true],
    ["Austin summers average 35 degrees in July.", true],
    ["Your Subaru is perfect for road trips.", true],
    ["Perfect for Lily's party.", true],
    ["Tokyo is expensive in cherry blossom season.", true],
  ])("an assistant's reaction is no fact, what it tells is: %s (kept: %s)", (said, kept) => {
    expect(texts(["assistant", said]).length).toBe(kept ? 1 : 0);
    // A named speaker (LoCoMo's) says it as a claim of theirs, whatever their role.
    if (!kept) expect(facts([turn(0, "assistant", said, "Melanie")]).length, said).toBe(1);
  });

  it.each([
    ["Where should we hike this summer?", "Mount Rainier is a hit with hikers in summer.", true],
    ["Which neighborhood in Lisbon should we stay in?", "Alfama is very charming and central.", true],
    ["Where should we go for fall foliage?", "Vermont is stunning in October.", true],
    // A reaction to a question that names nothing stays a reaction.
    ["We adopted a beagle! What do you think?", "Beagles are very loyal.", false],
  ])(
    "a verdict on something named, answering the user's question, is the assistant's recommendation: %s %s",
    (asked, said, kept) => {
      const replies = facts([turn(0, "user", asked), turn(1, "assistant", said)]).filter(
        (f) => f.source_role === "assistant",
      );
      expect(replies.length).toBe(kept ? 1 : 0);
      // Said with no question before it, it is the reaction the rule drops.
      if (kept) expect(texts(["assistant", said]), said).toEqual([]);
    },
  );

  it("writes a command, a mixed-case name or a file name as written at a sentence's start", () => {
    expect(texts(["assistant", "git branch -a lists all branches, including remote ones."])).toEqual([
      "The assistant said: git branch -a lists all branches, including remote ones.",
    ]);
    expect(texts(["assistant", "package.json holds the scripts of the project."])).toEqual([
      "The assistant said: package.json holds the scripts of the project.",
    ]);
    expect(texts(["user", "kind of a long day at the office today."])).toEqual([
      "Kind of a long day at the office today.",
    ]);
  });

  it("agrees an inverted question's auxiliary, and names what a lead-in introduced", () => {
    const [reply] = facts([
      turn(0, "user", "How do I list branches in git?"),
      turn(1, "assistant", "Use git branch -a to see every branch."),
    ]).filter((f) => f.source_role === "assistant");
    expect(reply!.context).toBe("How does the user list branches in git?");
    expect(
      texts([
        "user",
        "Here is my migration script:\n```sql\nCREATE INDEX x ON t(a);\n```\nIt hangs on the index.",
      ]),
    ).toEqual(["The user's migration script hangs on the index."]);
    expect(texts(["user", "Here is my plan: I will move to Berlin in May."])).toEqual([
      "The user will move to Berlin in May.",
    ]);
  });
});

describe("a short answer to a question", () => {
  it("is kept when it gives a name or a number, with the question as its context", () => {
    const reply = (question: string, answer: string) =>
      facts([turn(0, "assistant", question), turn(1, "user", answer)]).map((f) => [f.text, f.context]);
    expect(reply("Where did you go camping last summer?", "At Lake Tahoe.")).toEqual([
      ["At Lake Tahoe.", "Where did the user go camping last summer?"],
    ]);
    expect(reply("How old is your daughter?", "She's 7.")).toEqual([
      ["She is 7 years old.", "How old is the user's daughter?"],
    ]);
    // A thing's "it" has no age: "It's 5." answers what time it is.
    expect(reply("What time is it?", "It's 5.")).toEqual([["It's 5.", "What time is it?"]]);
    // The question's verb before "you" agrees with the third person.
    expect(reply("Where are you headed this weekend?", "Lake Tahoe with my wife.")).toEqual([
      ["Lake Tahoe with the user's wife.", "Where is the user headed this weekend?"],
    ]);
    expect(reply("Have you been to Japan before?", "Yes, twice, in 2019 and 2022.")).toEqual([
      ["Twice, in 2019 and 2022.", "Has the user been to Japan before?"],
    ]);
    // Nothing to keep: no name, no number.
    expect(reply("How are you today?", "Not bad, thanks.")).toEqual([]);
    expect(reply("Anything else?", "No, I'm good.")).toEqual([]);
  });
});

describe("an agentic session's artifacts", () => {
  const tool = (i: number, content: string, name?: string) => turn(i, "tool", content, name);
  const titles = (turns: ReturnType<typeof turn>[]) =>
    extractArtifacts(turns, true).map((a) => [a.title, a.content]);

  it("takes the file a tool call writes or reads, without the read's line numbers", () => {
    const code = "def to_cents(x):\n    return round(x * 100)\n\nCURRENCIES = ['EUR', 'USD']";
    expect(
      titles([
        tool(
          0,
          `call: ${JSON.stringify({ file_path: "/srv/app/billing/currency.py", content: code })}`,
          "Write",
        ),
      ]),
    ).toEqual([["/srv/app/billing/currency.py", code]]);
    const read = code
      .split("\n")
      .map((l, i) => `${String(i + 1).padStart(6)}→${l}`)
      .join("\n");
    expect(
      titles([
        tool(0, `call: ${JSON.stringify({ file_path: "/srv/app/billing/currency.py" })}`, "Read"),
        tool(1, `${read}\n     5→`),
      ]),
    ).toEqual([["/srv/app/billing/currency.py", `${code}\n`]]);
  });

  it("takes no log, diff or test run that names a file in its first line", () => {
    const webpack = [
      "asset chunk-0.js 39 KiB [emitted]",
      ...Array.from({ length: 6 }, (_, i) => `  module ${i} [built]`),
    ];
    const diff = [
      "diff --git a/billing/invoice.py b/billing/invoice.py",
      "index 1..2",
      "--- a/x",
      "+++ b/x",
      "+ raise X",
    ];
    const run = ["tests/test_currency.py F.", "", "FAILURES", "E   AssertionError", "1 failed, 1 passed"];
    for (const lines of [webpack, diff, run]) expect(titles([tool(0, lines.join("\n"))])).toEqual([]);
    // An output that opens with the file's path alone is that file.
    expect(
      titles([tool(0, ["==> src/app.ts <==", "import x from 'y';", "x();", "y();", "z();"].join("\n"))]),
    ).toEqual([["src/app.ts", "import x from 'y';\nx();\ny();\nz();"]]);
  });
});

describe("an agentic session's gist", () => {
  it("leaves JavaScript stack frames out of an agentic turn's facts, brackets in their paths included", () => {
    const frames = [
      "at Page (/app/(marketing)/about/page.tsx:5:3)",
      "at fn (webpack-internal:///(app-pages-browser)/./src/a.tsx:10:5)",
      "at fn (C:\\proj (copy)\\a.js:5:9)",
      "at Object.foo (/a/b (c)/d.js:1:2)",
      "at next (/a/b.js:2:3)",
      "at /srv/app/x.js:3:4",
      "at async Promise.all (index 0)",
      "at new Promise (<anonymous>)",
      "at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
    ];
    const { facts } = extractLocally({
      turns: [
        turn(0, "user", "Fix it"),
        turn(
          1,
          "assistant",
          [
            "TypeError: x is not a function",
            ...frames.map((f) => `    ${f}`),
            "The user deploys with Docker.",
          ].join("\n"),
        ),
      ],
      path: "live",
      extractArtifacts: false,
      agentic: true,
      known: [],
    });
    const text = facts.map((f) => f.text).join("\n");
    expect(text).toContain("The user deploys with Docker.");
    for (const f of frames) expect(text, f).not.toContain(f.slice(3));
  });

  it("lists files, not progress counts or stack frames, and errors by their codes", () => {
    const { episode } = extractLocally({
      turns: [
        turn(0, "user", "Start the stack and run the tests in test/api.test.ts."),
        turn(1, "tool", "docker compose up -d\nRunning 1/1\nContainer db Started", "Bash"),
        turn(
          2,
          "tool",
          "[error] ENOENT: no such file or directory, open 'config/local.json'\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
          "Bash",
        ),
        turn(3, "assistant", "I created config/local.json from the example and the tests pass now."),
      ],
      path: "live",
      extractArtifacts: false,
      agentic: true,
      known: [],
    });
    const gist = episode.gist as { files: string[]; errors: string[] };
    expect(gist.files).toEqual(expect.arrayContaining(["test/api.test.ts", "config/local.json"]));
    expect(gist.files).not.toContain("1/1");
    expect(gist.files).not.toContain("TCPConnectWrap.afterConnect");
    expect(gist.errors).toEqual(["ENOENT: no such file or directory, open 'config/local.json'"]);
  });

  it("lists the files the tool calls name first, no library file of a frame, property, branch or address", () => {
    const { episode } = extractLocally({
      turns: [
        turn(0, "user", "Fix the currency bug on branch fix/webhook-sig."),
        turn(1, "tool", `call: ${JSON.stringify({ file_path: "/srv/app/billing/currency.py" })}`, "Read"),
        turn(
          2,
          "tool",
          [
            "[error] Traceback (most recent call last):",
            '  File "/srv/app/billing/invoice.py", line 12, in total',
            "billing.errors.InvalidCurrencyError: eur",
            "    at renderWithHooks (node_modules/react-dom/cjs/react-dom.development.js:1:2)",
            "onChange.cancel() was called; DATABASE_URL=postgres://app@db.staging.internal/shop",
            "+ raise InvalidCurrencyError(code)",
          ].join("\n"),
          "Bash",
        ),
        turn(3, "assistant", "Fixed: currency codes are upper-cased before the lookup."),
      ],
      path: "live",
      extractArtifacts: false,
      agentic: true,
      known: [],
    });
    const gist = episode.gist as { files: string[]; errors: string[] };
    expect(gist.files[0]).toBe("/srv/app/billing/currency.py");
    for (const not of [
      "node_modules/react-dom/cjs/react-dom.development.js",
      "onChange.cancel",
      "fix/webhook-sig",
    ])
      expect(gist.files).not.toContain(not);
    expect(gist.files.filter((f) => f.includes("@"))).toEqual([]);
    expect(gist.errors).toEqual(["billing.errors.InvalidCurrencyError: eur"]);
  });
});

describe("an episode says each thing once, and its title writes names as names", () => {
  it("leaves a dated clause out of the summary when its dated sentence is in, and keeps capitals", () => {
    const dated = (i: number, content: string) => datedTurn(new Date("2024-01-10T12:00:00Z"), content, i);
    const { episode } = extraction([
      dated(0, "I live in Paris and I work at Initech as an engineer."),
      dated(1, "My friend Maria moved to Lisbon last year."),
      dated(2, "Maria says Lisbon is lovely and she moved there for work."),
    ]);
    expect(episode.summary.match(/works at Initech/g)).toHaveLength(1);
    expect(episode.title).toMatch(/Lisbon/);
    expect(episode.title).not.toMatch(/lisbon/);
  });
});

describe("what a turn says is kept", () => {
  it("takes 'I (really) like X' as a fact, though 'like' is chat filler elsewhere", () => {
    expect(facts([turn(0, "user", "I really like tea")]).map((f) => f.text)).toEqual([
      "The user really likes tea",
    ]);
    expect(facts([turn(0, "user", "I like jazz a lot")]).map((f) => f.text)).toEqual([
      "The user likes jazz a lot",
    ]);
    expect(facts([turn(0, "user", "I like it a lot")])).toEqual([]);
  });

  it("keeps a name's initials inside its sentence", () => {
    expect(
      facts([
        turn(0, "user", "My favourite author is Ursula K. Le Guin and I read her books every winter."),
      ]).map((f) => f.text),
    ).toEqual(["The user's favourite author is Ursula K. Le Guin and the user read her books every winter."]);
  });

  it("makes a long turn several facts of whole sentences, cutting none of it", () => {
    const sentences = Array.from(
      { length: 14 },
      (_, i) =>
        `I spent summer number ${i + 1} restoring an old sailing boat called Wren ${i + 1} with my uncle near the harbour of Porto, sanding the hull, fitting new rigging and learning every knot he knew.`,
    );
    const out = facts([turn(0, "user", sentences.join(" "))]).map((f) => f.text);
    expect(sentences.join(" ").length).toBeGreaterThan(2000);
    expect(out.length).toBeGreaterThan(1);
    for (const text of out) {
      expect(text.length).toBeLessThanOrEqual(1000);
      expect(text.endsWith("...")).toBe(false);
    }
    for (let i = 1; i <= 14; i++) expect(out.filter((t) => t.includes(`Wren ${i} `)).length).toBe(1);
  });

  it("reads 'Remember:' and other labels as part of the message, not as its speaker", () => {
    const routed = (content: string) =>
      routeTurns({ messages: [{ role: "user", content }] } as StoredRequest, 30).turns[0]!;
    expect(routed("Remember: always run the linter before a commit.")).toMatchObject({
      speaker: null,
      content: "Remember: always run the linter before a commit.",
    });
    expect(routed("Note: I moved to Lisbon.").speaker).toBeNull();
    // Nor is the label part of the fact.
    expect(
      facts([turn(0, "user", "Remember: my wife Ana has her birthday on 3 May.")]).map((f) => f.text),
    ).toEqual(["The user's wife Ana has her birthday on 3 May."]);
    expect(routed("Caroline: I went to the support group.")).toMatchObject({
      speaker: "Caroline",
      content: "I went to the support group.",
    });
    // An interjection, a function word, a plural noun or a kind of person is no speaker's name.
    for (const label of ["Yes", "Also", "Sure", "Honestly", "Sorry", "Wait", "Allergies", "Mom", "Doctor"])
      expect(routed(`${label}: my daughter starts school in September.`).speaker, label).toBeNull();
    // A name WordNet also has as another kind of noun, or not at all, is one.
    expect(routed("Rose: I went to the store.").speaker).toBe("Rose");
    expect(routed("Jon Snow: I went north.").speaker).toBe("Jon Snow");
    const fromRoute = (content: string) => facts([routed(content)]).map((f) => f.text);
    expect(fromRoute("Yes: my daughter starts school in September.")).toEqual([
      "The user's daughter starts school in September.",
    ]);
    expect(fromRoute("Mom: she turns 70 next month.")).toEqual(["The user's mom turns 70 next month."]);
    expect(fromRoute("Allergies: penicillin, cats.")).toEqual(["The user's allergies are penicillin, cats."]);
  });
});

describe("a form's fields in the user's message", () => {
  const routed = (content: string) =>
    routeTurns({ messages: [{ role: "user", content }] } as StoredRequest, 30).turns[0]!;
  const fromRoute = (content: string) => facts([routed(content)]).map((f) => f.text);
  it.each([
    "Name",
    "Age",
    "City",
    "Address",
    "Location",
    "Birthday",
    "Job",
    "Diet",
    "Budget",
    "Email",
    "Phone",
    "Password",
    "Time",
    "Place",
    "Date",
  ])("reads %s: as a field, never as a speaker's name", (label) => {
    expect(routed(`${label}: something to say here.`).speaker).toBeNull();
  });
  it.each([
    ["Budget: $2,000 for the whole trip.", ["The user's budget is $2,000 for the whole trip."]],
    ["Job: nurse at St. Mary's.", ["The user's job is nurse at St. Mary's."]],
    ["Address: 12 Pine St, Boulder, CO", ["The user's address is 12 Pine St, Boulder, CO"]],
    ["Location: Lisbon, Portugal.", ["The user's location is Lisbon, Portugal."]],
    ["Birthday: June 4.", ["The user's birthday is June 4."]],
    ["Diet: vegetarian.", ["The user's diet is vegetarian."]],
    // An event's fields are said as they are, each a sentence of its own.
    ["Time: 3pm. Place: the old library.", ["Time: 3pm. Place: the old library."]],
    ["Time: 3pm\nPlace: the old library", ["Time: 3pm. Place: the old library"]],
    // Fields on lines of their own end their sentences.
    [
      "Allergies: penicillin\nBlood type: O-",
      ["The user's allergies are penicillin. The user's blood type is O-"],
    ],
    // A person's attribute, a favourite or current one, is the user's; a thing's name labels an
    // item of the user's list, never "the user's milk is ...".
    ["Kids: Sam and Ava.", ["The user's kids are Sam and Ava."]],
    ["Milk: 2 litres.", ["The user noted: Milk: 2 litres."]],
    ["Milk: 2 litres\nEggs: 12", ["The user noted: Milk: 2 litres; Eggs: 12."]],
    ["Packing list:\n- tent\n- stove!", ["The user's packing list is tent; stove!"]],
    [
      "Shopping list:\nEggs: 12\nMilk: 2 liters\nBread: 1 loaf",
      ["The user's shopping list: Eggs: 12; Milk: 2 liters; Bread: 1 loaf."],
    ],
    ["Grocery list:\n\nEggs: 12\nMilk: 2 liters", ["The user's grocery list: Eggs: 12; Milk: 2 liters."]],
    // A list's heading takes items of every kind; a form's field stays the user's attribute.
    [
      "Camping list:\nTent: the 4-person one\nDocs: permits\nBudget: $200",
      ["The user's camping list: Tent: the 4-person one; Docs: permits. The user's budget is $200"],
    ],
  ])("%s", (content, want) => {
    expect(fromRoute(content)).toEqual(want);
  });
  it("ends a sentence at a heading, a paragraph's end and a label's line", () => {
    expect(
      fromRoute(
        "Subject: Quarterly budget review\n\nHi team, the budget review is on Thursday and I will present the numbers.",
      ),
    ).toEqual([
      "Subject: Quarterly budget review. The budget review is on Thursday and the user will present the numbers.",
    ]);
    // A heading before a list's items introduces them.
    expect(fromRoute("# Packing list\n\nClothes: three shirts and a jacket.")).toEqual([
      "The user's packing list: Clothes: three shirts and a jacket.",
    ]);
    expect(fromRoute("We moved to Leeds in May\n\nThe kids love their new school")).toEqual([
      "The user and others moved to Leeds in May. The kids love their new school",
      "The user and others moved to Leeds in May.",
    ]);
  });
  it("records a form's name and age as a self-introduction does, and its city", () => {
    for (const form of [
      "Name: Dana Ruiz. Age: 34. City: Chicago.",
      "Name: Dana Ruiz\nAge: 34\nCity: Chicago.",
    ])
      expect(extraction([routed(form)]).facts.map((f) => f.text)).toEqual([
        "The user's name is Dana Ruiz.",
        "Dana Ruiz is 34 years old. Dana Ruiz's city is Chicago.",
        "Dana Ruiz is 34 years old.",
      ]);
  });
});

describe("a conversation pasted into one message", () => {
  const fromRoute = (content: string) =>
    facts(routeTurns({ messages: [{ role: "user", content }] } as StoredRequest, 30).turns).map(
      (f) => f.text,
    );
  it("gives each line to the speaker it names, not to the user nor to the first name", () => {
    expect(fromRoute("Alice: I live in Berlin.\nBob: I live in Rome.")).toEqual([
      "Alice lives in Berlin.",
      "Bob lives in Rome.",
    ]);
    // An introduction is the sender's; a line without a name goes on with the speaker before it.
    expect(
      fromRoute(
        "Here is what my roommates told me.\nAlice: I live in Berlin.\nBob: I live in Rome.\nI work at the zoo there.",
      ),
    ).toEqual([
      "Here is what the user's roommates told the user.",
      "Alice lives in Berlin.",
      "Bob lives in Rome. Bob works at the zoo there.",
      "Bob lives in Rome.",
      "Bob works at the zoo there.",
    ]);
    // One named line is a message's speaker, as before; a form's fields name no one.
    expect(fromRoute("Caroline: I went to the support group.\nIt helped a lot with my anxiety.")).toEqual([
      "Caroline went to the support group. It helped a lot with Caroline's anxiety.",
    ]);
    expect(fromRoute("Job: nurse at St. Mary's.\nCity: Boston.")).toEqual([
      "The user's job is nurse at St. Mary's. The user's city is Boston.",
    ]);
  });
  it("reads no line of a dialogue as an item the user noted", () => {
    const out = fromRoute(
      "Coach: Sam, you're starting on Saturday.\nSam: Really?\nCoach: Yes.\nSam deserves it after all that practice.",
    );
    expect(out.join(" ")).toContain("Sam deserves it after all that practice.");
    for (const text of out) {
      expect(text).not.toContain("noted");
      expect(text).not.toContain("Really");
      expect(text).not.toMatch(/[?!]\./);
    }
  });
  it.each([
    // A person's kind, an interjection or a modal is a speaker's label among utterances.
    [
      "Man: I've been waiting here for an hour.\nWoman: The bus is always late on Sundays.",
      ["Man has been waiting here for an hour.", "Woman said: The bus is always late on Sundays."],
    ],
    [
      "Mom: don't forget grandpa's birthday is on June 9.\nDad: and he wants a fishing rod.",
      ["Mom said: Don't forget grandpa's birthday is on June 9.", "Dad said: He wants a fishing rod."],
    ],
    // The first line after an introduction is split too; "Me:" is the sender.
    [
      "Here's what my coworkers said in standup.\nWill: I finished the login page.\nGrace: I'm blocked on the API keys.\nMark: I'm out on Friday.",
      [
        "Here's what the user's coworkers said in standup.",
        "Will finished the login page.",
        "Grace is blocked on the API keys.",
        "Mark is out on Friday.",
      ],
    ],
    [
      "Here's my text thread with my sister about Thanksgiving.\nMe: I'll host this year, we have the bigger table.\nSarah: Great, I'm bringing the pie and my new boyfriend Tom.",
      [
        "Here's the user's text thread with the user's sister about Thanksgiving.",
        "The user will host this year, the user and others have the bigger table.",
        "Great, Sarah is bringing the pie and Sarah's new boyfriend Tom.",
      ],
    ],
    // A line of speech ("Wow!", "Okay.") or labelled with a name is no item of a list.
    ["Tom: Wow!\nAnna: Okay.", []],
    // An item noted with a "!" is still an item, and under a list's heading "yes" is a checked one.
    [
      "Packing list:\nPassport: yes\nCharger: 2\nSunscreen: SPF 50!",
      ["The user's packing list: Passport: yes; Charger: 2; Sunscreen: SPF 50!"],
    ],
    // Lines about the one their label names are the sender's.
    [
      "Mom: she turns 70 next month.\nDad: he's 72 and still runs every day.",
      [
        "The user's mom turns 70 next month. The user's dad is 72 and still runs every day.",
        // An age said beside another claim stands alone too, in the words of an age.
        "The user's dad is 72 years old.",
      ],
    ],
    // A line without a name that names the speaker before it, or speaks of several speakers, is
    // the sender's comment; the lines after it go on with the sender.
    [
      "Alice: I live in Berlin.\nBob: I live in Rome.\nI think Bob should move.",
      ["Alice lives in Berlin.", "Bob lives in Rome.", "The user thinks Bob should move."],
    ],
    [
      "Alice: I live in Berlin.\nBob: I live in Rome.\nAlice and Bob met at university.\nI introduced them.",
      [
        "Alice lives in Berlin.",
        "Bob lives in Rome.",
        "Alice and Bob met at university. The user introduced them.",
      ],
    ],
    [
      "Alice: I live in Berlin.\nBob: I live in Rome.\nThey should both move back to Oslo.",
      ["Alice lives in Berlin.", "Bob lives in Rome.", "They should both move back to Oslo."],
    ],
    // Naming another speaker, or "they" alone, goes on with the speaker.
    [
      "Alice: I live in Berlin.\nBob: I live in Rome.\nAlice, you should visit me.",
      ["Alice lives in Berlin.", "Bob lives in Rome. Alice should visit Bob.", "Bob lives in Rome."],
    ],
    [
      "Alice: I live in Berlin.\nBob: I live in Rome.\nThey have great pizza there.",
      ["Alice lives in Berlin.", "Bob lives in Rome. They have great pizza there.", "Bob lives in Rome."],
    ],
  ])("splits %j by its speakers", (content, want) => {
    expect(fromRoute(content)).toEqual(want);
  });
  it.each([
    [
      "Can you remember my shopping list for Saturday?\nMilk: 2 litres\nEggs: 12\nBread: sourdough from the bakery",
      ["2 litres", "12", "sourdough from the bakery"],
    ],
    [
      "Here's my grandma's pancake recipe.\nFlour: 2 cups\nSugar: 1 tbsp\nMilk: 1.5 cups",
      ["2 cups", "1 tbsp", "1.5 cups"],
    ],
    ["Flour: 2 cups\nSugar: 1 tbsp\nMilk: 1.5 cups", ["2 cups", "1 tbsp", "1.5 cups"]],
    [
      "Packing list for the Iceland trip:\nClothes: thermal layers and a rain jacket\nGear: headlamp, crampons\nDocs: passport and travel insurance",
      ["thermal layers and a rain jacket", "headlamp, crampons", "passport and travel insurance"],
    ],
    [
      "Agenda for Monday's team meeting:\nBudget: review Q3 spend\nHiring: two backend roles\nRoadmap: payments launch in June",
      ["review Q3 spend", "two backend roles", "payments launch in June"],
    ],
    [
      "My trip details:\nFlight: UA 837 on April 2\nHotel: Park Hyatt Tokyo\nBudget: $3,000",
      ["UA 837 on April 2", "Park Hyatt Tokyo", "$3,000"],
    ],
    [
      "Shopping list:\nEggs: 12\nMilk: 2 liters\nBread: 1 loaf",
      ["Eggs: 12", "Milk: 2 liters", "Bread: 1 loaf"],
    ],
  ])("keeps the list %j the user's, in one fact with every line", (content, items) => {
    const out = fromRoute(content);
    expect(out).toHaveLength(1);
    expect(out[0]).not.toMatch(/ said:/);
    for (const item of items) expect(out[0]).toContain(item);
    // An item's label is no attribute of the user's ("the user's milk is 2 litres"); a form's field is.
    for (const [, label] of content.matchAll(/^([A-Z][a-z]+): /gm))
      if (!FIELD_LABELS.has(label!.toLowerCase()))
        expect(out[0]).not.toContain(`user's ${label!.toLowerCase()}`);
  });
});

describe("an episode's summary", () => {
  it("says each sentence once, though an attribute also stands alone as a fact", () => {
    const { facts: out, episode } = extraction([
      turn(0, "user", "I live in Paris with two cats. The cats love the balcony in Paris."),
      turn(1, "user", "I work as a nurse in Paris at the big hospital."),
    ]);
    expect(out.map((f) => f.text)).toContain("The user lives in Paris with two cats.");
    const sentences = splitSentences(episode.summary);
    // Nor a clause said alone beside the sentence it came from.
    const { episode: moved } = extraction([turn(0, "user", "I moved to Leeds and I work as a nurse.")]);
    expect(moved.summary).toBe("The user moved to Leeds and the user works as a nurse.");
    // "the user and others" names no topic of the title.
    const { episode: outing } = extraction([
      turn(0, "user", "We went hiking and we loved the lake."),
      turn(1, "user", "We go hiking every month and we swim in the lake."),
    ]);
    expect(outing.title).toMatch(/hiking|lake/);
    expect(outing.title).not.toMatch(/\b(?:others|user)\b/);
    expect(sentences.length).toBeGreaterThan(1);
    expect(new Set(sentences).size).toBe(sentences.length);
  });
});

describe("a fact taken out of its episode's summary", () => {
  it("leaves even where the summary's sentence split did not isolate it", () => {
    // The next sentence starts with "<", which starts no sentence: the split kept the two together.
    expect(
      withoutSentencesOf(
        "Dana said: the build is fixed. <img src=x> said: hello there. Bob likes tea.",
        "Dana said: the build is fixed.",
      ),
    ).toBe("<img src=x> said: hello there. Bob likes tea.");
    expect(withoutSentencesOf("A likes tea. B likes tea. C likes tea.", "B likes tea.")).toBe(
      "A likes tea. C likes tea.",
    );
    // Only whole sentences go: a longer sentence that contains it stays.
    expect(withoutSentencesOf("Not only B likes tea. C likes tea.", "B likes tea.")).toBe(
      "Not only B likes tea. C likes tea.",
    );
  });

  it("is said in its place as what of it still holds, once", () => {
    expect(
      withoutSentencesOf(
        "A likes tea and B likes tea. C likes tea.",
        "A likes tea and B likes tea.",
        "B likes tea.",
      ),
    ).toBe("B likes tea. C likes tea.");
    // Not where the summary says it already.
    expect(
      withoutSentencesOf(
        "A likes tea and C likes tea. C likes tea.",
        "A likes tea and C likes tea.",
        "C likes tea.",
      ),
    ).toBe("C likes tea.");
    // Where the split did not isolate it too.
    expect(withoutSentencesOf("A and B. <b> said hi.", "A and B.", "B.")).toBe("B. <b> said hi.");
  });
});

describe("lists and an assistant's words", () => {
  it("keeps what a list is, its 'Here's' left out, with its items", () => {
    expect(
      facts([
        turn(
          0,
          "user",
          "Here's what I need for the camping trip next weekend:\n- tent (the 4-person REI one)\n- 2 sleeping bags\n- camp stove\n- bear spray",
        ),
      ]).map((f) => f.text),
    ).toEqual([
      "What the user needs for the camping trip next weekend: tent (the 4-person REI one); 2 sleeping bags; camp stove; bear spray.",
    ]);
  });

  it("keeps every item of a list in the fact, after the line that introduces it", () => {
    const out = facts([
      turn(
        0,
        "user",
        "How to release the package:\n1. Run npm run build\n2. Run npm run migrate\n3. Run ./scripts/deploy.sh prod",
      ),
    ]).map((f) => f.text);
    expect(out).toEqual([
      "How to release the package: Run npm run build; Run npm run migrate; Run ./scripts/deploy.sh prod.",
    ]);
    // A blank line after the introduction, or a heading for it, leaves the items its own.
    const introduced = (content: string) => facts([turn(0, "user", content)]).map((f) => f.text);
    expect(
      introduced("How to release the package:\n\n1. Run npm run build\n2. Run ./deploy.sh prod"),
    ).toEqual(["How to release the package: Run npm run build; Run ./deploy.sh prod."]);
    expect(introduced("# Release steps\n\n1. Run npm run build\n2. Run ./deploy.sh prod")).toEqual([
      "Release steps: Run npm run build; Run ./deploy.sh prod.",
    ]);
  });

  it("stores no courtesy of the assistant as a fact, and reads its 'Fixed:' as no speaker", () => {
    const out = facts([
      turn(0, "user", "I got a job offer from Stripe!"),
      turn(1, "assistant", "Congratulations on the new role at Stripe! I bet you will love it there."),
    ]).map((f) => f.text);
    expect(out).toEqual(["The user got a job offer from Stripe!"]);
    const routed = routeTurns(
      {
        messages: [{ role: "assistant", content: "Fixed: the tests pass again after the rename." }],
      } as StoredRequest,
      30,
    ).turns[0]!;
    expect(routed.speaker).toBeNull();
  });
});

describe("a changed attribute, said the ways people say it", () => {
  const judge = (old: string, text: string) =>
    judgeLocally({ text, candidates: [{ id: "old", text: old, similarity: 0.5 }] }).verdict;
  it.each([
    ["The user works at Acme Corp as a designer.", "The user no longer works at Acme Corp."],
    ["The user works at Acme Corp as a designer.", "The user doesn't work at Acme Corp anymore."],
    ["The user works at Acme Corp as a designer.", "Now the user works at Initech as a manager."],
    ["The user works as a software engineer at Google in Mountain View.", "The user left Google."],
    ["The user works as a software engineer at Google.", "The user now works at Stripe as a staff engineer."],
    [
      "The user lives in Denver.",
      "The user and others moved from Denver to Austin last month (October 2026).",
    ],
    ["The user is a vegetarian these days.", "The user is not vegetarian anymore."],
    ["Alice Chen is vegetarian.", "Actually, Alice Chen isn't vegetarian anymore."],
    ["The user lives in Paris.", "The user lives in Berlin."],
    ["The user is 34 years old.", "The user just turned 35."],
    // Someone's age turned, whenever it is said to have been; someone's age said now.
    ["The user's son Noah is 9 years old.", "Noah turned 10 years old last Sunday (9 March 2025)."],
    ["Noah is 9 years old.", "Noah turned 10 years old two days ago (9 March 2025)."],
    ["The user's daughter Zoë is 9 years old and she loves horses.", "Zoë turned 10 years old last Sunday."],
    ["Noah is 9 years old.", "Noah turned 10 years old in March."],
    ["The user's son Noah is 9 years old.", "Noah is 10 years old now."],
  ])("%s -> %s supersedes", (old, text) => {
    expect(judge(old, text)).toBe("supersedes");
  });

  it.each([
    ["The user plays tennis every weekend.", "The user stopped playing tennis."],
    ["The user plays chess.", "The user no longer plays chess."],
    ["The user runs every morning.", "The user stopped running."],
    ["The user loves sushi.", "The user doesn't like sushi anymore."],
    ["The user enjoys horror films.", "On 3 May 2024, the user doesn't enjoy horror films anymore."],
    ["The user uses Vim as the user's editor.", "The user switched from Vim to VS Code last month."],
    ["The user drives a Honda Civic.", "The user sold the user's Civic and now drives a Tesla."],
    ["The user drinks coffee every morning.", "The user gave up coffee."],
    ["The user smokes a pack a day.", "The user quit smoking last year (2025)."],
    ["Priya studies Japanese.", "Priya stopped studying Japanese."],
    // "We" (the user and others) is the user, on either side; a phrase of where before the subject
    // is no matter.
    ["The user and others use jest for tests.", "The user and others moved from jest to vitest."],
    ["The user and others play tennis every weekend.", "The user and others stopped playing tennis."],
    ["The user and others play tennis every weekend.", "The user no longer plays tennis."],
    ["The user drives a Honda Civic.", "The user and others sold the Civic and bought a Subaru Outback."],
    ["In this repo the user uses jest for tests.", "The user moved from jest to vitest."],
    ["At work Nora and others use Jira.", "In this repo Nora and others switched from Jira to Linear."],
    // A change from one thing to another ends being on the first (a plan, a shift), however said.
    [
      "The user is on the Pro plan.",
      "The user and others upgraded from the Pro plan to the Enterprise plan.",
    ],
    ["The user and others are on the Pro plan.", "The user downgraded from the Pro plan to the Basic plan."],
    ["The user is on the Pro plan.", "The user switched from the Pro plan to the Team plan."],
    [
      "The user and others are on the Pro plan.",
      "The user and others moved from the Pro plan to the Enterprise plan.",
    ],
    ["The user is on the night shift.", "The user changed from the night shift to the day shift."],
    ["The user uses the Pro plan.", "The user upgraded from the Pro plan to the Enterprise plan."],
    // The assistant's completed change for the user (of them, or their account) is the user's.
    [
      "The user is on the Pro plan.",
      "The assistant has upgraded your account from the Pro plan to the Team plan.",
    ],
    ["The user is on the Pro plan.", "The assistant moved you from the Pro plan to the Basic plan."],
    ["The user is on the Pro plan.", "The user upgraded their account from the Pro plan to the Team plan."],
    // What took the thing's place, said after it, is no part of the thing.
    ["The user drinks coffee every morning.", "The user no longer drinks coffee, only tea now."],
    ["The user drinks coffee every morning.", "The user doesn't drink coffee anymore, only tea now."],
    ["The user drinks coffee every morning.", "The user gave up coffee, just green tea now."],
    [
      "The user drinks coffee every morning.",
      "The user stopped drinking coffee, the user drinks tea instead.",
    ],
    // A thing chosen instead of another: the same verb and words before it, with the old thing.
    [
      "The user and others are going to Paris in May.",
      "The user and others are going to Rome instead of Paris.",
    ],
    ["The user is going to Paris in May.", "The user is going to Rome rather than Paris."],
    ["The user drinks coffee every morning.", "The user drinks tea instead of coffee now."],
    ["The user uses npm for everything.", "The user uses pnpm instead of npm."],
    // A choice said with a scope ends the statement of the same scope.
    ["On Sundays the user drinks coffee.", "On Sundays the user drinks tea instead of coffee."],
    ["The user uses VS Code for Go.", "The user uses Vim instead of VS Code for Go."],
    [
      "The user and others are flying to Paris in April.",
      "The user and others are flying to Paris in May instead of April.",
    ],
  ])("%s -> %s supersedes (what the user stopped doing, liking, using or having)", (old, text) => {
    expect(judge(old, text)).toBe("supersedes");
  });

  it("leaves what an ending does not end: a past event, someone else, another thing, another verb, a denial", () => {
    expect(judge("The user watched a tennis match with Tom.", "The user stopped playing tennis.")).toBe(
      "new",
    );
    expect(judge("The user's sister plays tennis.", "The user stopped playing tennis.")).toBe("new");
    expect(judge("The user plays chess.", "The user stopped playing tennis.")).toBe("new");
    expect(judge("The user runs a bakery.", "The user stopped running.")).toBe("new");
    expect(judge("The user doesn't play tennis.", "The user stopped playing tennis.")).toBe("new");
    expect(judge("The user watches tennis on TV.", "The user stopped playing tennis.")).toBe("new");
    expect(judge("The user bought a Civic in 2019.", "The user sold the user's Civic.")).toBe("new");
    expect(judge("The user drives a red car.", "The user stopped the car.")).toBe("new");
    // "We" is the user, not anyone else, and ends what the user does, in the present only.
    expect(judge("The user plays tennis every weekend.", "The user and others stopped playing chess.")).toBe(
      "new",
    );
    expect(judge("The user's sister plays tennis.", "The user and others stopped playing tennis.")).toBe(
      "new",
    );
    expect(judge("The user and others played tennis on Sunday.", "The user stopped playing tennis.")).toBe(
      "new",
    );
    expect(
      judge("The user and others will play tennis on Sunday.", "The user and others stopped playing tennis."),
    ).toBe("new");
    expect(
      judge("The user and others use jest for tests.", "The user's team moved from jest to vitest."),
    ).toBe("new");
    // A move from a thing ends being on it, not being anything else with it.
    expect(
      judge(
        "The user's sister is on the Pro plan.",
        "The user upgraded from the Pro plan to the Enterprise plan.",
      ),
    ).toBe("new");
    expect(judge("The user is a fan of Paris.", "The user moved from Paris to Berlin.")).toBe("new");
    // The assistant's change of something else, or of someone else's account, ends none of the user's.
    expect(
      judge(
        "The user is on the Pro plan.",
        "The assistant has upgraded the server from the Pro plan to the Team plan.",
      ),
    ).toBe("new");
    expect(
      judge(
        "The user is on the Pro plan.",
        "The user's sister upgraded your account from the Pro plan to the Team plan.",
      ),
    ).toBe("new");
    expect(judge("The user is on the Pro plan.", "The user moved from the Basic plan to the Pro plan.")).toBe(
      "new",
    );
    // What took its place is not what ended.
    expect(
      judge("The user drinks tea every morning.", "The user no longer drinks coffee, only tea now."),
    ).toBe("new");
    // A thing chosen instead of another ends only the same doing of it, in the present, and the
    // same subject's.
    const rome = "The user and others are going to Rome instead of Paris.";
    expect(judge("The user loves Paris.", rome)).toBe("new");
    expect(judge("The user and others went to Paris in May.", rome)).toBe("new");
    expect(judge("The user's sister is going to Paris in May.", rome)).toBe("new");
    expect(judge("The user is going to Paris in May.", "The user went to Rome instead of Paris.")).toBe(
      "new",
    );
  });

  it.each([
    // A negated choice says the old thing still holds.
    [
      "The user and others are going to Paris in May.",
      "The user and others are not going to Rome instead of Paris.",
    ],
    ["The user uses Postgres.", "The user is not using SQLite instead of Postgres."],
    ["The user drinks coffee every morning.", "The user never drinks tea instead of coffee."],
    ["The user drinks coffee every morning.", "The user isn't drinking tea instead of coffee."],
    // A choice limited to a scope (a day, a project, a condition, a use) leaves the general fact.
    ["The user drinks coffee every morning.", "On Sundays the user drinks tea instead of coffee."],
    [
      "The user uses Postgres for work projects.",
      "For this side project the user uses SQLite instead of Postgres.",
    ],
    ["The user uses VS Code for Python.", "The user uses Vim instead of VS Code for Go."],
    ["The user takes the train to work.", "When it rains, the user takes the bus instead of the train."],
    ["The user drinks coffee every morning.", "The user drinks tea rather than coffee in the evening."],
  ])("%s -> %s is new (a negated or scoped choice of one thing over another)", (old, text) => {
    expect(judge(old, text)).toBe("new");
  });

  it("never takes a fact naming another thing or number for a near neighbour's restatement", () => {
    const near = (old: string, text: string, similarity: number) =>
      judgeLocally({ text, candidates: [{ id: "old", text: old, similarity }] }).verdict;
    const cat = (name: string) =>
      `The user adopted a cat named ${name} last week (the week before 27 November 2026).`;
    expect(near(cat("Tom0x27"), cat("Tom2x12"), 0.95)).toBe("new");
    expect(near("The user's flight number is 714.", "The user's flight number is 417.", 0.99)).toBe("new");
    // The same claim said another week, and a restatement with its own words, are duplicates.
    expect(
      near(cat("Tom"), "The user adopted a cat named Tom last week (the week before 4 December 2026).", 0.95),
    ).toBe("duplicate");
    expect(near("The user adopted a cat named Tom.", "The user has adopted a cat named Tom.", 0.95)).toBe(
      "duplicate",
    );
  });

  it("a value said beside another changes none; a new value ends the one held, a negation either; a place is named", () => {
    const acme = { id: "acme", text: "The user works at Acme.", similarity: 0.5 };
    const bakery = { id: "bakery", text: "The user also works at a bakery on weekends.", similarity: 0.5 };
    expect(judge(acme.text, bakery.text)).toBe("new");
    expect(
      judge("The user works as a nurse.", "The user works as a volunteer firefighter on weekends."),
    ).toBe("new");
    expect(judge("The user is vegetarian.", "The user is vegan on weekdays.")).toBe("new");
    // "Works at Acme, which is closed on weekends": said of Acme, not of the job.
    expect(judge(acme.text, "The user works at Globex, which is closed on weekends.")).toBe("supersedes");
    expect(judgeLocally({ text: "The user works at Globex now.", candidates: [bakery, acme] })).toEqual({
      verdict: "supersedes",
      id: "acme",
    });
    expect(judge(bakery.text, "The user quit the bakery.")).toBe("supersedes");
    expect(sameSlot(bakery.text, acme.text)).toBe(false);
    expect(sameSlot("The user works at Globex now.", bakery.text)).toBe(false);
    expect(sameSlot("The user works at Globex now.", acme.text)).toBe(true);
    // Where someone lives: a place named, at the start or in the home's description; not a home,
    // a shift, a drink or a month.
    expect(judge("The user lives in Denver.", "The user moved to a new house in Tacoma.")).toBe("supersedes");
    expect(judge("The user moved to a new house in Tacoma.", "The user lives in Tacoma.")).toBe("duplicate");
    expect(judge("The user lives in denver.", "The user moved to austin.")).toBe("supersedes");
    expect(judge("The user lives in Paris.", "The user lives in the Bay Area now.")).toBe("supersedes");
    // A move from a name that is no place to another is no home, nor one a move ends; one from a
    // place WordNet knows is, to a name it does not know.
    expect(judge("The user lives in Paris.", "The user moved from Vim to Emacs.")).toBe("new");
    // A move between names WordNet does not know as places still looks up the homes held (the
    // judge ends the one it leaves): without it, "lives in Kyiv" was never a candidate.
    expect(slotSearches("The user moved from Kyiv to Lviv.").map((x) => x.kind)).toContain("residence");
    expect(judge("The user lives in Kyiv.", "The user moved from Kyiv to Lviv.")).toBe("supersedes");
    expect(judge("The user lives in Paris.", "The user moved from Kyiv to Lviv.")).toBe("new");
    expect(
      sameSlot("The user moved to Berlin.", "The user and others moved from Fly to Render for hosting."),
    ).toBe(false);
    expect(judge("The user lives in Leeds.", "The user moved from Leeds to York.")).toBe("supersedes");
    // Every statement of the home held ends, the first as `id`.
    expect(
      judgeLocally({
        text: "The user moved to Berlin.",
        candidates: [
          { id: "emacs", text: "The user moved from Vim to Emacs.", similarity: 0.5 },
          { id: "paris", text: "The user lives in Paris now.", similarity: 0.5 },
          { id: "kids", text: "The user and others live in Paris with the kids.", similarity: 0.5 },
        ],
      }),
    ).toEqual({ verdict: "supersedes", id: "paris", also: ["kids"] });
    for (const text of [
      "The user lives in a small apartment near the park.",
      "The user moved to a bigger apartment downtown.",
      "The user moved to the night shift last week (the week before 15 March 2024).",
      "The user moved to decaf in January.",
    ])
      expect(judge("The user lives in Denver.", text), text).toBe("new");
  });

  it("leaves what did not change: more said, a restatement, another subject, another value negated", () => {
    expect(judge("The user works at Initech.", "The user works at Initech as a manager.")).toBe("new");
    expect(judge("The user works at Acme Corp.", "The user works at Acme.")).toBe("duplicate");
    expect(judge("The user's sister lives in Rome.", "The user lives in Berlin.")).toBe("new");
    expect(judge("The user works at Acme.", "The user no longer works at Initech.")).toBe("new");
  });

  it("takes an age or a diet said in a few words, and an age in the words of an age", () => {
    const one = (content: string) => facts([turn(0, "user", content)]).map((f) => f.text);
    expect(one("I'm 34.")).toEqual(["The user is 34 years old."]);
    expect(one("I just turned 35.")).toEqual(["The user just turned 35 years old."]);
    expect(one("My son turned 7 last week.")[0]).toMatch(/^The user's son turned 7 years old last week/);
    // Said now, or as a correction "X, not Y" (its label and opener left out).
    expect(one("I am 30 now.")).toEqual(["The user is 30 years old now."]);
    expect(one("Correction: I am 30, not 29.")).toEqual(["The user is 30 years old, not 29."]);
    expect(one("Sorry, I live in York, not Leeds.")).toEqual(["The user lives in York, not Leeds."]);
    expect(one("Wait no, sorry, I live in York.")).toEqual(["The user lives in York."]);
    expect(one("I'm vegetarian.")).toEqual(["The user is vegetarian."]);
    // Someone's age by their name, "'s" too; not a thing's number ("Dinner is 7.").
    expect(one("Noah is 9.")).toEqual(["Noah is 9 years old."]);
    expect(one("Noah's 10 now.")).toEqual(["Noah is 10 years old now."]);
    expect(one("Dinner is 7.")).toEqual([]);
    // Not an age: a turn of a thing.
    expect(one("The car turned 180 degrees on the ice.")).toEqual(["The car turned 180 degrees on the ice."]);
    // "Turned N" is an age only with nothing but a time (or the next clause) after the number.
    expect(one("Mia turned 30 pages of her book yesterday.")).toEqual([
      "Mia turned 30 pages of her book yesterday.",
    ]);
    expect(one("Noah turned 10 last Sunday and we had a party.")[0]).toMatch(
      /^Noah turned 10 years old last Sunday and /,
    );
    expect(one("Lily turned 7 in May.")).toEqual(["Lily turned 7 years old in May."]);
    // "On" a day, a date or a birthday is the time of an age; "on page 5" is not.
    expect(one("Mia turned 30 on page 5 of the novel.")).toEqual(["Mia turned 30 on page 5 of the novel."]);
    expect(one("Lily turned 7 on 3 May.")).toEqual(["Lily turned 7 years old on 3 May."]);
    expect(one("Grandpa Joe turned 80 on Christmas Day.")).toEqual([
      "Grandpa Joe turned 80 years old on Christmas Day.",
    ]);
    expect(one("Noah turned 9 on his birthday last week.")).toEqual([
      "Noah turned 9 years old on his birthday last week.",
    ]);
    expect(one("I turned 30 on my birthday.")).toEqual([
      "The user turned 30 years old on the user's birthday.",
    ]);
    expect(one("I turned 50 on our anniversary.")[0]).toMatch(/^The user turned 50 years old on /);
    expect(one("Mia turned 30 on the weekend.")).toEqual(["Mia turned 30 years old on the weekend."]);
    expect(one("Mia turned 30 on a Saturday.")).toEqual(["Mia turned 30 years old on a Saturday."]);
    expect(one("Mia turned 30 on 2024-05-01.")).toEqual(["Mia turned 30 years old on 2024-05-01."]);
    expect(one("Mia turned 30 on Halloween.")).toEqual(["Mia turned 30 years old on Halloween."]);
    expect(one("Noah turned 6 on the first day of school.")).toEqual([
      "Noah turned 6 years old on the first day of school.",
    ]);
    // Not an age: a number of a thing.
    expect(one("My flight number is 714.")).toEqual(["The user's flight number is 714."]);
  });

  it("gives each attribute clause of a sentence joining claims as a fact of its own", () => {
    expect(facts([turn(0, "user", "I live in Oslo and I work as a carpenter.")]).map((f) => f.text)).toEqual([
      "The user lives in Oslo and the user works as a carpenter.",
      "The user lives in Oslo.",
      "The user works as a carpenter.",
    ]);
    // The user known by name: the same.
    expect(
      facts([turn(0, "user", "Hi, I'm Priya. I moved to Leeds and I work as a nurse.")]).map((f) => f.text),
    ).toEqual(expect.arrayContaining(["Priya moved to Leeds.", "Priya works as a nurse."]));
    // A noun phrase after "and" is no clause.
    expect(
      facts([turn(0, "user", "I live in Oslo with my partner and our cat.")]).map((f) => f.text),
    ).toEqual(["The user lives in Oslo with the user's partner and the user's cat."]);
  });
});

describe("everyday kinds WordNet's first senses do not give", () => {
  it("makes a kept animal a pet, a son or daughter a kid, a move a place one lives, a job work", () => {
    expect(conceptTerms("My dog Biscuit runs in the park.")).toEqual(expect.arrayContaining(["pet", "pets"]));
    expect(conceptTerms("We adopted two kittens.")).toEqual(expect.arrayContaining(["pet"]));
    expect(conceptTerms("My daughter Emma is 7.")).toEqual(expect.arrayContaining(["kid", "kids", "child"]));
    expect(conceptTerms("Alice moved to Seattle last spring.")).toEqual(
      expect.arrayContaining(["live", "lives"]),
    );
    expect(conceptTerms("I love to move the furniture around.")).not.toContain("live");
    expect(conceptTerms("We moved from Toronto to Ottawa.")).toEqual(
      expect.arrayContaining(["live", "lives"]),
    );
    expect(conceptTerms("The user started a new job at Stripe.")).toEqual(
      expect.arrayContaining(["work", "works"]),
    );
    expect(conceptTerms("Maria was hired by Google as an engineer.")).toEqual(
      expect.arrayContaining(["work", "job"]),
    );
    expect(conceptTerms("Dan works for the council.")).toContain("job");
    expect(conceptTerms("Sure, Friday works for me.")).not.toContain("job");
    expect(conceptTerms("The dog-eared book is on the shelf.")).not.toContain("pet");
  });

  it("makes a diet of vegetarian or pescatarian, and a job of an offer accepted as a role", () => {
    for (const said of ["I'm vegetarian.", "The user is pescatarian now.", "Dana went vegan in May."])
      expect(conceptTerms(said), said).toEqual(expect.arrayContaining(["diet", "dietary"]));
    expect(conceptTerms("The user accepted an offer from Stripe as a senior product manager.")).toEqual(
      expect.arrayContaining(["job", "work", "employer"]),
    );
    expect(conceptTerms("Tom got a job offer from a bank.")).toContain("employer");
    expect(conceptTerms("I got an offer from the buyer for the house.")).not.toContain("job");
    expect(conceptTerms("Maria was hired by Google as an engineer.")).toContain("employer");
  });
});

describe("a job joined, and an ailment named by two words", () => {
  it("makes a job of joining a company or joining as an occupation, not of joining a club or as a guest", () => {
    for (const said of [
      "I joined a startup called Fernwood as CTO.",
      "Priya joined Stripe as a senior engineer.",
      "She joined a law firm in Boston.",
      "Tom joined the company as an accountant last year.",
    ])
      expect(conceptTerms(said), said).toEqual(expect.arrayContaining(["job", "work", "employer"]));
    for (const said of [
      "I joined a book club.",
      "We joined them as guests for dinner.",
      "I joined the gym last week.",
      "She joined the choir as a member.",
    ])
      expect(conceptTerms(said), said).not.toContain("employer");
  });

  it("brings an ailment of two words its broader ailments and the ailment their adjective names", () => {
    expect(conceptTerms("I get hay fever every spring.")).toEqual(
      expect.arrayContaining(["allergy", "allergic rhinitis", "illness", "health condition"]),
    );
    expect(conceptTerms("I got food poisoning in Rome.")).toContain("illness");
    // Two words that are no ailment ("every spring", "book club") bring none of these.
    expect(conceptTerms("I read every spring in the book club.")).not.toContain("illness");
  });
});

describe("adjectives and the nouns WordNet derives them from", () => {
  it("brings the ailment of a plain adjective ('allergic' -> allergy), not another noun, nor a noun's or verb's", () => {
    expect(conceptTerms("The user is allergic to penicillin.")).toEqual(
      expect.arrayContaining(["allergy", "illness", "health condition"]),
    );
    // Pregnancy is no ailment: every derived noun cost LoCoMo a question at R@1.
    expect(conceptTerms("She is pregnant with twins.")).not.toContain("pregnancy");
    // "cold" is a noun too, "free" a verb: neither is read through a derived noun.
    expect(conceptTerms("It was cold.")).toEqual([]);
    expect(conceptTerms("Entry is free.")).toEqual([]);
    expect(expandWord("allergy")).toEqual(expect.arrayContaining(["illness", "health condition"]));
  });
});

describe("a turn's clauses", () => {
  it("reads 'the user and others' as one subject: no clause of 'others' alone", () => {
    const texts = (content: string) => facts([turn(0, "user", content)]).map((f) => f.text);
    expect(texts("I'm a nurse, we live in Ohio.")).toEqual([
      "The user is a nurse, the user and others live in Ohio.",
    ]);
  });
});

describe("a typed apostrophe reads as ASCII's", () => {
  // Phones and word processors type "’" (U+2019), some "‘" or "ʼ" (U+02BC): the same facts as "'".
  const said = [
    "I'm vegan and I've been vegan since 2019.",
    "I don't work at Acme anymore.",
    "I'm not vegetarian anymore.",
    "I'm 34.",
    "My name's Dana.",
    "Don't use yarn in this repo, use pnpm.",
  ];
  const typed = said.flatMap((s) => ["\u2019", "\u2018", "\u02bc"].map((a) => [s, s.replaceAll("'", a)]));
  it.each(typed)("%s typed as %s", (ascii, curly) => {
    const as = (content: string) => {
      const x = extraction([turn(0, "user", content)]);
      return { facts: x.facts.map((f) => f.text), directives: x.directives.map((d) => [d.type, d.text]) };
    };
    const want = as(ascii);
    expect(want.facts.length + want.directives.length).toBeGreaterThan(0);
    expect(as(curly)).toEqual(want);
  });

  it("leaves code as written", () => {
    const x = extractLocally({
      turns: [turn(0, "user", "My greeting script is:\n```js\nconsole.log('It\u2019s up');\n```")],
      path: "live",
      extractArtifacts: true,
      agentic: false,
      known: [],
    });
    expect(JSON.stringify(x.artifacts)).toContain("It\u2019s up");
  });
});

describe("names and sentences of other languages", () => {
  const cases: Array<[string, string | null]> = [
    // A letter outside ASCII is part of its word: "I" of "Iñaki" is no pronoun.
    ["Iñaki is my best friend from Bilbao.", "Iñaki is the user's best friend from Bilbao."],
    ["My cousin Iñigo lives in Madrid now.", "The user's cousin Iñigo lives in Madrid now."],
    [
      "We visited Iğdır and Işıklar last summer.",
      "The user and others visited Iğdır and Işıklar last summer.",
    ],
    // Another language's "me", "my" and "I" are no English speaker's: the sentence stays as said.
    ["Je me lève tôt et je me couche tard le soir.", "Je me lève tôt et je me couche tard le soir."],
    ["Eu me levanto cedo todos os dias.", "Eu me levanto cedo todos os dias."],
    ["Yo me llamo Carlos y me gusta el fútbol.", "Yo me llamo Carlos y me gusta el fútbol."],
    ["Ik ben Jan en ik woon in Utrecht met my vrouw.", "Ik ben Jan en ik woon in Utrecht met my vrouw."],
    // ... while English without a function word is English ("Love my new bike!").
    ["Love my new bike!", "Love the user's new bike!"],
    // Words with combining marks (vowel signs, points) and Thai, written without spaces, are kept.
    ["ผมอาศัยอยู่ที่เชียงใหม่ และทำงานเป็นครูสอนภาษาอังกฤษ", "ผมอาศัยอยู่ที่เชียงใหม่ และทำงานเป็นครูสอนภาษาอังกฤษ"],
    ["मुझे बिरयानी बहुत पसंद है और मैं हर रविवार योग करती हूँ।", "मुझे बिरयानी बहुत पसंद है और मैं हर रविवार योग करती हूँ।"],
    ["আমি কলকাতায় থাকি এবং একটি ব্যাংকে কাজ করি।", "আমি কলকাতায় থাকি এবং একটি ব্যাংকে কাজ করি।"],
    [
      "நான் சென்னையில் வசிக்கிறேன் மற்றும் ஆசிரியராக வேலை செய்கிறேன்.",
      "நான் சென்னையில் வசிக்கிறேன் மற்றும் ஆசிரியராக வேலை செய்கிறேன்.",
    ],
    ["אֲנִי אוֹהֵב לִקְרוֹא סְפָרִים בַּלַּיְלָה", "אֲנִי אוֹהֵב לִקְרוֹא סְפָרִים בַּלַּיְלָה"],
    ["Я веган уже пять лет.", "Я веган уже пять лет."],
    // ... but not a question, nor a greeting or courtesy alone.
    ["Как тебя зовут?", null],
    ["Спасибо большое!", null],
    ["¡Muchas gracias!", null],
    ["नमस्ते!", null],
  ];
  it.each(cases)("%s", (content, want) => {
    expect(facts([turn(0, "user", content)])[0]?.text ?? null).toBe(want);
  });

  it("keeps each turn of a conversation routed in another language, its words whole", () => {
    const request = {
      messages: [
        { role: "user", content: "I drink green tea every morning at home." },
        { role: "user", content: "ผมอาศัยอยู่ที่เชียงใหม่ และทำงานเป็นครูสอนภาษาอังกฤษ" },
        { role: "user", content: "मुझे बिरयानी बहुत पसंद है और मैं हर रविवार योग करती हूँ।" },
      ],
    } as StoredRequest;
    const x = extraction(routeTurns(request, 30).turns);
    expect(x.facts.map((f) => f.source_event_ids[0])).toEqual(["0", "1", "2"]);
    expect(x.facts[2]!.text).toContain("बिरयानी");
  });

  it("drops the assistant's greetings and courtesies in other languages, as in English", () => {
    for (const courtesy of ["很高兴认识你！", "よろしくお願いします！", "आपसे मिलकर खुशी हुई!", "Enchanté !"])
      expect(
        facts([turn(0, "user", "I just moved to Lyon."), turn(1, "assistant", courtesy)]),
        courtesy,
      ).toEqual([expect.objectContaining({ text: "The user just moved to Lyon." })]);
  });
});

describe("a self-introduction in another language", () => {
  it.each([
    ["Hola, soy José.", "José"],
    ["Me llamo Carlos y vivo en Madrid.", "Carlos"],
    ["Je m'appelle Amélie, j'habite à Lyon.", "Amélie"],
    ["Ich heiße Jan und wohne in Berlin.", "Jan"],
    ["Mi chiamo Marco.", "Marco"],
    ["Eu me chamo João e moro em Lisboa.", "João"],
    ["我叫王伟，我在北京工作。", "王伟"],
    ["田中と申します。", "田中"],
    // "soy" without a greeting says what, not who
    ["Soy Vegano.", null],
  ])("%s", (content, name) => {
    expect(introducedName(content)).toBe(name);
    if (name) expect(facts([turn(0, "user", content)])[0]?.text).toBe(`The user's name is ${name}.`);
  });
});

describe("what an ended claim says beyond the change", () => {
  // Kept as a fact of its own when the claim is superseded; null when the change names it all.
  it.each([
    [
      "the user is vegan and allergic to shellfish",
      "The user is not vegan anymore.",
      "the user is allergic to shellfish",
    ],
    [
      "the user is vegetarian, allergic to peanuts",
      "The user is not vegetarian anymore.",
      "the user is allergic to peanuts",
    ],
    ["their husband prefers tea", "The user no longer drinks coffee.", "the user's husband prefers tea"],
    [
      "the user works at Google, where the user met their wife Anna in 2015",
      "The user left Google.",
      "the user met their wife Anna in 2015",
    ],
    [
      "the user goes to the gym on Mondays because the user's back hurts",
      "The user stopped going to the gym.",
      "the user's back hurts",
    ],
    [
      "the user works as a nurse at Mercy Hospital in Ottawa",
      "The user works as a product manager at Stripe now.",
      null,
    ],
    ["the user's daughter Lily is 6 years old", "Lily turned 7 today.", null],
    ["the user lives in Paris", "The user moved to Lyon last weekend.", null],
    ["the user drinks coffee every morning", "The user no longer drinks coffee.", null],
  ])("%s, by %s", (clause, by, rest) => {
    expect(restBeyond(clause, [by], [])).toBe(rest);
  });
});

describe("very long input", () => {
  // A pattern built from a word of the text failed to compile at about 33,000 letters ("Regular
  // expression too large"), and the whole job failed with it.
  const long = "x".repeat(50_000);
  const Long = `X${long}`;
  it.each([
    ["alone", long],
    ["opening a sentence", `${long} and I went home.`],
    ["as a dropped subject's state", `${long} to the bone.`],
    ["after a past tense", `Went to ${long} yesterday.`],
    ["as a name", `My name is ${Long}.`],
    ["as an introduction", `Hi, I'm ${Long}, a nurse.`],
    ["called", `Call me ${Long}.`],
    ["here", `${Long} here.`],
    ["as a form's name", `Name: ${Long}.`],
    ["capitalised in a sentence", `I love ${Long} and ${Long}.`],
  ])("a 50,000-letter word %s: the other turn's fact is kept", (_label, content) => {
    const out = extraction([turn(0, "user", "I live in Paris."), turn(1, "user", content)]);
    expect(out.facts.map((f) => f.text)).toContain("The user lives in Paris.");
    // No name is taken from it: a name is at most three words of 48 letters.
    expect(out.facts.some((f) => f.text.startsWith("The user's name is X") && f.text.length < 100)).toBe(
      false,
    );
  });

  // Patterns that backtracked over the whole text made extraction quadratic in a sentence's or a
  // line's length: 50,000 characters took 2 to 6 s, and a 1 MB body would have held a worker (and,
  // under `serve`, the API) for many minutes. Each shape here, at 400,000 characters, now takes
  // well under a second; quadratic, it would take minutes, past the test's time-out.
  const shapes: [string, string][] = [
    ["letters", "x"],
    ["exclamation marks", "!"],
    ["tabs", "\t"],
    ["Chinese characters", "中"],
    ["an address's characters", "a.b+c-"],
    ["dotted words", "a."],
    ["words", "lorem "],
    ["lines", "a\n"],
    ["stack frames", "at f (("],
  ];
  it.each(shapes)(
    "400,000 characters of %s, said by either speaker, are read in linear time",
    async (_label, unit) => {
      const content = unit.repeat(Math.ceil(400_000 / unit.length));
      for (const role of ["user", "assistant"]) {
        for (const agentic of [false, true]) {
          const out = extractLocally({
            turns: [turn(0, "user", "I live in Paris."), turn(1, role, content)],
            path: "live",
            extractArtifacts: true,
            agentic,
            known: [],
          });
          expect(out.facts.map((f) => f.text)).toContain("The user lives in Paris.");
        }
      }
    },
    60_000,
  );
});
