package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The synthetic set: ten conversations of 30 sessions (about 840 turns,
// 30,000 tokens) between two friends, chit-chat from a few hundred
// sentence templates, with 40 questions each asked after the last
// session. Its proportions were fixed before any formula was tried on it,
// from what makes a question hard for each kind of context:
//
//   - fact (40%): a fact stated once in an early or middle session, asked
//     about with two or three of its words; three later turns share one or
//     two of those words (distractors), so neither recency nor one shared
//     word finds it;
//   - paraphrase (10%): the same, asked in other words: only the owner's
//     name and at most one word meet, so a lexical scorer should mostly
//     fail (a set a lexical scorer could not fail would flatter it);
//   - pair (20%): one friend asks, the other answers in the next turn; the
//     question's words are in the asking turn, the answer has almost none,
//     and both are evidence;
//   - two facts (10%): one question about two facts of different sessions;
//   - recent (10%): a fact from the last session, which a window keeps;
//   - other languages (10%): a fact and its question in Portuguese,
//     German, Chinese or Japanese, in a conversation that switches to
//     them now and then.

// synthConvs and synthSessions size the set.
const (
	synthConvs    = 10
	synthSessions = 30
)

// Synthetic returns the synthetic set for seed.
func Synthetic(seed uint64) []*Conversation {
	convs := make([]*Conversation, synthConvs)
	for i := range convs {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		convs[i] = synthConversation(r, fmt.Sprintf("synthetic-%02d", i+1), pairs[i%len(pairs)])
	}
	return convs
}

var pairs = [][2]string{
	{"Ana", "Ben"}, {"Chloe", "Dev"}, {"Elif", "Femi"}, {"Grace", "Hugo"}, {"Ines", "Jonas"},
	{"Kira", "Luca"}, {"Maya", "Nils"}, {"Olga", "Pedro"}, {"Rosa", "Sami"}, {"Tara", "Umar"},
}

// synth is one conversation being made.
type synth struct {
	r     *rand.Rand
	names [2]string
	c     *Conversation
	used  []bool // turns already holding a fact, an ask or a distractor
	first []int  // the first turn of each session, and len(Turns) at the end
}

func synthConversation(r *rand.Rand, name string, names [2]string) *Conversation {
	s := &synth{r: r, names: names, c: &Conversation{Name: name}}
	when := time.Date(2025, 1, 6, 19, 0, 0, 0, time.UTC)
	for sess := 1; sess <= synthSessions; sess++ {
		s.first = append(s.first, len(s.c.Turns))
		n := 24 + r.IntN(9)
		speaker := r.IntN(2)
		for i := range n {
			s.c.Turns = append(s.c.Turns, Turn{
				ID:      fmt.Sprintf("D%d:%d", sess, i+1),
				Session: sess,
				Time:    when.Add(time.Duration(i) * turnGap),
			})
			s.say(len(s.c.Turns)-1, speaker, s.filler(speaker))
			speaker = 1 - speaker
		}
		when = when.Add(time.Duration(3+r.IntN(18))*24*time.Hour + time.Duration(r.IntN(300))*time.Minute)
	}
	s.first = append(s.first, len(s.c.Turns))
	s.used = make([]bool, len(s.c.Turns))

	kinds := slices.Concat(
		slices.Repeat([]string{"fact"}, 16), slices.Repeat([]string{"paraphrase"}, 4),
		slices.Repeat([]string{"pair"}, 8), slices.Repeat([]string{"two"}, 4),
		slices.Repeat([]string{"recent"}, 4), slices.Repeat([]string{"language"}, 4))
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	facts := r.Perm(2 * len(factTypes)) // fact type and owner, each once
	langs := r.Perm(len(foreignFacts))
	for _, kind := range kinds {
		switch kind {
		case "language":
			s.plantForeign(foreignFacts[langs[0]])
			langs = langs[1:]
		case "two":
			a, b := facts[0], facts[1]
			facts = facts[2:]
			s.plantTwo(a, b)
		default:
			s.plant(kind, facts[0])
			facts = facts[1:]
		}
	}
	return s.c
}

// say makes turn i speaker's line.
func (s *synth) say(i, speaker int, text string) {
	t := &s.c.Turns[i]
	t.Role = [2]string{"user", "assistant"}[speaker]
	t.Content = s.names[speaker] + ": " + text
}

// fill writes the names into a template: {A} the speaker, {B} the other.
func (s *synth) fill(tpl string, speaker int) string {
	return strings.NewReplacer("{A}", s.names[speaker], "{B}", s.names[1-speaker]).Replace(tpl)
}

// filler returns a line of chit-chat, now and then in another language.
func (s *synth) filler(speaker int) string {
	if s.r.IntN(12) == 0 {
		return s.fill(foreignFillers[s.r.IntN(len(foreignFillers))], speaker)
	}
	var b strings.Builder
	for range 2 + s.r.IntN(3) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		tpl := fillers[s.r.IntN(len(fillers))]
		tpl = strings.ReplaceAll(tpl, "{thing}", things[s.r.IntN(len(things))])
		tpl = strings.ReplaceAll(tpl, "{place}", places[s.r.IntN(len(places))])
		tpl = strings.ReplaceAll(tpl, "{time}", times[s.r.IntN(len(times))])
		b.WriteString(s.fill(tpl, speaker))
	}
	return b.String()
}

// free returns a turn of sessions [from, to] (1-based) that holds no
// planted line, and, when next, whose next turn is free in the same
// session.
func (s *synth) free(from, to int, next bool) int {
	for {
		sess := from + s.r.IntN(to-from+1)
		lo, hi := s.first[sess-1], s.first[sess]
		i := lo + s.r.IntN(hi-lo)
		if s.used[i] || next && (i+1 >= hi || s.used[i+1]) {
			continue
		}
		s.used[i] = true
		if next {
			s.used[i+1] = true
		}
		return i
	}
}

// value picks the fact's value.
func (s *synth) value(f *factType) string { return f.values[s.r.IntN(len(f.values))] }

// distract plants lines that share the question's words, after turn i.
func (s *synth) distract(f *factType, after int) {
	for _, d := range f.distractors {
		j := s.free(min(s.c.Turns[after].Session+1, synthSessions), synthSessions, false)
		sp := s.r.IntN(2)
		s.say(j, sp, s.fill(d, sp))
	}
}

// plant states a fact of type and owner k (factTypes[k/2], speaker k%2)
// and asks about it.
func (s *synth) plant(kind string, k int) {
	f, owner := &factTypes[k/2], k%2
	x := s.value(f)
	q := Question{Category: kind}
	switch kind {
	case "pair":
		i := s.free(1, synthSessions-2, true)
		s.say(i, 1-owner, s.fill(f.ask, 1-owner))
		s.say(i+1, owner, strings.ReplaceAll(s.fill(f.answer, owner), "{X}", x))
		q.Text, q.Evidence = s.fill(f.question, owner), []int{i, i + 1}
		s.distract(f, i)
	default:
		from, to := 1, synthSessions-2
		if kind == "recent" {
			from, to = synthSessions, synthSessions
		}
		i := s.free(from, to, false)
		s.say(i, owner, strings.ReplaceAll(s.fill(f.fact, owner), "{X}", x))
		q.Text, q.Evidence = s.fill(f.question, owner), []int{i}
		if kind == "paraphrase" {
			q.Text = s.fill(f.paraphrase, owner)
		}
		if kind != "recent" {
			s.distract(f, i)
		}
	}
	s.c.Questions = append(s.c.Questions, q)
}

// plantTwo states two facts in different sessions and asks about both.
func (s *synth) plantTwo(a, b int) {
	fa, fb := &factTypes[a/2], &factTypes[b/2]
	i := s.free(1, synthSessions/2, false)
	j := s.free(synthSessions/2+1, synthSessions-2, false)
	s.say(i, a%2, strings.ReplaceAll(s.fill(fa.fact, a%2), "{X}", s.value(fa)))
	s.say(j, b%2, strings.ReplaceAll(s.fill(fb.fact, b%2), "{X}", s.value(fb)))
	q := Question{Category: "two", Evidence: []int{i, j}}
	q.Text = s.fill(fa.question, a%2) + " And " + strings.ToLower(s.fill(fb.question, b%2)[:1]) + s.fill(fb.question, b%2)[1:]
	s.c.Questions = append(s.c.Questions, q)
}

// plantForeign states a fact in another language and asks about it in
// that language.
func (s *synth) plantForeign(f foreignFact) {
	owner := s.r.IntN(2)
	i := s.free(1, synthSessions-2, false)
	s.say(i, owner, s.fill(f.fact, owner))
	s.c.Questions = append(s.c.Questions, Question{Category: "language", Text: s.fill(f.question, owner), Evidence: []int{i}})
	for _, d := range f.distractors {
		j := s.free(min(s.c.Turns[i].Session+1, synthSessions), synthSessions, false)
		sp := s.r.IntN(2)
		s.say(j, sp, s.fill(d, sp))
	}
}

// A factType is a kind of fact a friend tells, and the ways it is asked
// about: {A} is the owner, {B} the friend, {X} the value.
type factType struct {
	fact        string   // the owner states it
	question    string   // asked later, with two or three of the fact's words
	paraphrase  string   // asked in other words
	ask, answer string   // the friend asks (with the question's words), the owner answers
	values      []string // {X}
	distractors []string // later lines sharing the question's words
}

var factTypes = []factType{
	{"Big news, we adopted a puppy and named her {X}!", "What is the name of {A}'s puppy?", "What does {A} call the dog?",
		"{B}, did you pick a name for the new puppy yet?", "Yes, we went with {X} in the end.",
		[]string{"Biscuit", "Pepper", "Luna", "Mochi", "Waffles"},
		[]string{"The neighbour's puppy chewed my shoes again.", "I can never remember the name of that bakery.", "A puppy at the park followed us home, so cute!"}},
	{"I moved to {X} last month, the apartment is near the river.", "Which city did {A} move to last month?", "Where does {A} live now?",
		"{B}, so which city did you end up moving to?", "It's {X}! Still unpacking boxes.",
		[]string{"Lisbon", "Tromsø", "Valparaíso", "Hobart", "Ljubljana"},
		[]string{"My cousin wants to move to a bigger city.", "Last month was crazy busy at work.", "The river walk was flooded last month."}},
	{"I started learning the {X}, my teacher is very patient.", "Which instrument is {A} learning?", "What music lessons does {A} take?",
		"Are you still learning an instrument, {B}?", "Yes, the {X}! My fingers hurt but I love it.",
		[]string{"cello", "banjo", "oboe", "harp", "accordion"},
		[]string{"I heard a street musician with an amazing instrument today.", "My nephew is learning to drive, scary!", "The teacher at the workshop was so patient."}},
	{"My sister {X} is getting married in June!", "What is the name of {A}'s sister who is getting married?", "Whose wedding is {A} going to?",
		"{B}, which of your sisters is the one getting married?", "{X}, the youngest. I'm the maid of honour!",
		[]string{"Marta", "Yuki", "Priya", "Sofia", "Leila"},
		[]string{"My friend's sister just had a baby.", "June is always full of weddings.", "Getting married sounds stressful honestly."}},
	{"I got a job at {X} as a designer, I start on Monday.", "Which company hired {A} as a designer?", "Where does {A} work?",
		"So where is the new job, {B}?", "At {X}! Designer role, starting Monday.",
		[]string{"Fennel Labs", "Orchard Robotics", "Bluebird Press", "Quarry Games", "Tidewater Health"},
		[]string{"The designer of that poster is a genius.", "Monday meetings drain me.", "My company hired ten new people this week."}},
	{"My favourite dish these days is {X}, I cook it every Sunday.", "What dish does {A} cook every Sunday?", "What is {A}'s weekend meal?",
		"What do you usually cook on Sundays, {B}?", "{X}, always. It never gets old.",
		[]string{"shakshuka", "mushroom risotto", "pad see ew", "pierogi", "jollof rice"},
		[]string{"Sunday was so lazy, we ordered pizza.", "My favourite cafe closed down.", "I tried to cook fish and burned it."}},
	{"I ran my first half marathon in {X}, I'm so proud!", "What was {A}'s time in the first half marathon?", "How fast did {A} finish the long race?",
		"How did the half marathon go, {B}? What was your time?", "{X}! Slower than I hoped but I finished.",
		[]string{"1:58", "2:05", "2:14", "1:49", "2:21"},
		[]string{"My knees hurt after the run yesterday.", "Proud of my brother for his first job.", "There is a marathon on Sunday so the roads are closed."}},
	{"We booked a trip to {X} for the spring, I can't wait.", "Where is {A}'s spring trip?", "Which country is {A} visiting soon?",
		"{B}, where are you going on the trip this spring?", "{X}! Flights are booked.",
		[]string{"Japan", "Peru", "Morocco", "Iceland", "Vietnam"},
		[]string{"Spring cleaning took the whole day.", "I booked a dentist appointment finally.", "The school trip was cancelled because of rain."}},
	{"I'm allergic to {X}, found out the hard way at a dinner.", "What is {A} allergic to?", "Which food makes {A} sick?",
		"Wait {B}, what was it you can't eat again?", "{X}. I swell up like a balloon.",
		[]string{"shellfish", "peanuts", "kiwi", "sesame", "mustard"},
		[]string{"Half the office has allergies in spring.", "The dinner party was fun but long.", "I found out my phone was broken the hard way."}},
	{"I finally read {X}, it made me cry on the train.", "Which book made {A} cry on the train?", "What novel moved {A} recently?",
		"What are you reading these days, {B}?", "{X}. Finished it on the train, in tears.",
		[]string{"The Remains of the Day", "Piranesi", "Pachinko", "Stoner", "The Overstory"},
		[]string{"The train was late again this morning.", "My book club picked something boring.", "Don't cry over the broken vase, it was cheap."}},
	{"We bought a {X}, first car I ever owned!", "Which car did {A} buy?", "What does {A} drive now?",
		"{B}, what kind of car did you get?", "A {X}. Used, but it runs great.",
		[]string{"red Volvo", "Honda Fit", "blue Mini", "Toyota Yaris", "Škoda Octavia"},
		[]string{"The car in front of me stalled at the light.", "I bought new running shoes.", "My first apartment had no heating."}},
	{"I joined a {X} class on Thursdays, the group is lovely.", "Which class does {A} take on Thursdays?", "What does {A} do on weeknights?",
		"What's the Thursday class you mentioned, {B}?", "{X}! I'm terrible but it's fun.",
		[]string{"pottery", "salsa", "bouldering", "life drawing", "improv"},
		[]string{"Thursdays are my busiest days.", "The group chat is so noisy.", "My yoga class was cancelled."}},
	{"My grandmother turns {X} this year, we're throwing a party.", "How old is {A}'s grandmother turning?", "What birthday is {A}'s family celebrating?",
		"How old is your grandmother turning, {B}?", "{X}! Still sharper than all of us.",
		[]string{"90", "85", "100", "95", "88"},
		[]string{"My grandmother's recipes are the best.", "The party next door went until 3am.", "I'm turning into my dad."}},
	{"I'm volunteering at the {X} on weekends now.", "Where does {A} volunteer on weekends?", "How does {A} help out in the community?",
		"Where do you volunteer, {B}?", "At the {X}. Saturdays mostly.",
		[]string{"animal shelter", "food bank", "community garden", "children's hospital", "public library"},
		[]string{"Weekends fly by too fast.", "They asked for volunteers at school.", "The garden needs weeding badly."}},
	{"My new laptop is a {X}, the battery lasts forever.", "Which laptop did {A} get?", "What computer does {A} use?",
		"Which laptop did you end up buying, {B}?", "The {X}. Battery is unreal.",
		[]string{"ThinkPad X1", "MacBook Air", "Framework 13", "Dell XPS", "Surface Laptop"},
		[]string{"My phone battery dies by noon.", "The new office chairs are terrible.", "Forever is a long time to wait for a bus."}},
	{"I got a tattoo of a {X} on my arm, it means a lot to me.", "What is {A}'s tattoo of?", "What did {A} get inked?",
		"Can I see the tattoo, {B}? What is it?", "A {X}. It's for my mum.",
		[]string{"swallow", "compass", "lotus", "whale", "fern"},
		[]string{"My arm is sore from the vaccine.", "That tattoo shop looks sketchy.", "It means a lot that you called."}},
	{"We planted {X} in the backyard, hoping for a harvest in August.", "What did {A} plant in the backyard?", "What is growing at {A}'s home?",
		"What did you end up planting, {B}?", "{X}! Fingers crossed for August.",
		[]string{"tomatoes", "pumpkins", "strawberries", "sunflowers", "chillies"},
		[]string{"The backyard is full of snails.", "August is too hot for me.", "We were hoping for better weather."}},
	{"My son's first word was {X}, we laughed so much.", "What was the first word of {A}'s son?", "What did {A}'s baby say first?",
		"Has your son said his first word yet, {B}?", "He has: {X}! We couldn't stop laughing.",
		[]string{"duck", "moon", "no", "cookie", "ball"},
		[]string{"My son has a fever this week.", "We laughed at the comedy show.", "First day back at work was rough."}},
	{"I passed the exam to become a {X}, all that studying paid off.", "Which exam did {A} pass?", "What is {A} qualified as now?",
		"{B}, how did the big exam go?", "Passed! I'm officially a {X}.",
		[]string{"pharmacist", "pilot", "paramedic", "notary", "sommelier"},
		[]string{"The exam season makes everyone anxious.", "Studying at night never worked for me.", "It paid off to wait for the sale."}},
	{"Our band is called {X}, our first gig is next week.", "What is the name of {A}'s band?", "What does {A}'s group of musicians go by?",
		"What's the band called, {B}?", "{X}! Don't laugh.",
		[]string{"The Velvet Owls", "Paper Comets", "Kettle Drum", "Neon Tide", "Low Orbit"},
		[]string{"There was a great band at the wedding.", "The first week of the diet is the hardest.", "What is the name of that song you sent?"}},
	{"I lost my {X} at the airport, still hoping someone finds it.", "What did {A} lose at the airport?", "What went missing during {A}'s travels?",
		"Did they ever find what you lost at the airport, {B}?", "No, the {X} is still gone.",
		[]string{"passport", "wedding ring", "camera", "backpack", "grandad's watch"},
		[]string{"The airport was packed this morning.", "I lost my keys again.", "Still hoping the rain stops tomorrow."}},
	{"We named the boat {X}, my dad would have loved it.", "What did {A} name the boat?", "What is written on {A}'s sailboat?",
		"Did you choose a name for the boat, {B}?", "{X}. For my dad.",
		[]string{"Sea Biscuit", "Wanderer", "Marigold", "Second Wind", "Little Heron"},
		[]string{"The boat tour was fun but I got seasick.", "My dad called to ask about the game.", "Did you name the new plant?"}},
	{"My favourite painter is {X}, I saw the exhibition twice.", "Who is {A}'s favourite painter?", "Whose art does {A} admire?",
		"Who's your favourite painter, {B}?", "{X}, no contest.",
		[]string{"Paula Rego", "Hokusai", "Frida Kahlo", "Turner", "Hilma af Klint"},
		[]string{"The exhibition tickets were sold out.", "My favourite mug broke.", "I painted the kitchen last weekend."}},
	{"I'm training for a {X} in the autumn, it's my big goal this year.", "What is {A} training for in the autumn?", "What challenge is {A} preparing for?",
		"What's the autumn goal you're training for, {B}?", "A {X}. Terrified!",
		[]string{"triathlon", "mountain climb", "200 km bike ride", "swim across the lake", "ultramarathon"},
		[]string{"Autumn is my favourite season.", "The training at work was pointless.", "My big goal is to sleep more."}},
}

// A foreignFact is a fact and its question in another language.
type foreignFact struct {
	fact, question string
	distractors    []string
}

var foreignFacts = []foreignFact{
	{"O meu restaurante favorito no bairro chama-se Tasca do Zé, fazem um bacalhau incrível.",
		"Como se chama o restaurante favorito de {A} no bairro?",
		[]string{"O restaurante da esquina fechou para obras.", "O bairro está cheio de turistas este verão."}},
	{"Comecei aulas de surf na Ericeira, a professora é muito paciente.",
		"Onde é que {A} começou as aulas de surf?",
		[]string{"As aulas de inglês do meu filho começaram ontem.", "A professora de matemática mandou muitos trabalhos."}},
	{"Ich habe endlich meinen Führerschein bestanden, nach drei Versuchen!",
		"Nach wie vielen Versuchen hat {A} den Führerschein bestanden?",
		[]string{"Mein Bruder macht gerade den Führerschein.", "Drei Versuche für einen Kuchen, und er ist trotzdem verbrannt."}},
	{"Unsere Tochter geht ab September in die Waldorfschule in Freiburg.",
		"In welche Schule geht die Tochter von {A} ab September?",
		[]string{"Im September ist immer so viel los.", "Die Schule hat ein neues Dach bekommen."}},
	{"我下个月要去成都参加大学室友的婚礼。",
		"{A}下个月要去哪里参加婚礼？",
		[]string{"我的大学室友最近换了工作。", "下个月的天气应该会好一点。"}},
	{"我最近在学做川菜，最拿手的是麻婆豆腐。",
		"{A}最拿手的川菜是什么？",
		[]string{"昨天去吃了一家很辣的川菜馆。", "我妈妈做的豆腐汤最好喝。"}},
	{"来月、京都で茶道の体験教室に行きます。",
		"{A}はどこで茶道の体験教室に行きますか？",
		[]string{"京都の紅葉はとてもきれいでした。", "体験教室の予約はもういっぱいでした。"}},
	{"新しい猫を飼い始めました。名前はコタロウです。",
		"{A}の新しい猫の名前は何ですか？",
		[]string{"友達の猫が病気になりました。", "新しい名前を考えるのは難しいです。"}},
}

// foreignFillers are chit-chat in the same languages.
var foreignFillers = []string{
	"Hoje está um dia lindo, vamos dar uma volta à beira-mar?",
	"Estou tão cansado, a semana foi longa.",
	"Das Wetter ist heute furchtbar, ich bleibe zu Hause.",
	"Ich habe gestern einen tollen Film gesehen.",
	"今天工作好累，晚上想早点睡。",
	"周末我们去公园散步吧。",
	"今日はとても暑いですね。",
	"週末は家でゆっくりします。",
}

var fillers = []string{
	"How was your week, {B}?",
	"Work has been hectic but I'm hanging in there.",
	"I spent the weekend at {place} with the kids.",
	"Honestly I just needed some rest after {time}.",
	"That sounds amazing, I'm so happy for you!",
	"I've been thinking a lot about {thing} lately.",
	"We should grab coffee at {place} soon.",
	"My mum called and we talked for hours about {thing}.",
	"I'm trying to be better about {thing} this year.",
	"The weather was gorgeous {time}, we went for a long walk.",
	"I tried a new recipe {time}, it was a disaster, haha.",
	"Thanks for asking, {B}, it means a lot.",
	"I'm so proud of you, you've worked really hard.",
	"Can't believe how fast this year is going.",
	"I watched a documentary about {thing}, really eye-opening.",
	"We finally cleaned out the garage {time}.",
	"My friends and I went to {place} and stayed up way too late.",
	"I've been feeling a bit stressed about {thing}.",
	"That's a great idea, let me know how it goes!",
	"Oh wow, I didn't know that about you.",
	"I love that, it's such a good way to unwind.",
	"Do you ever feel like there's not enough time in the day?",
	"I'm reading about {thing} and it's fascinating.",
	"We had a picnic at {place}, the kids loved it.",
	"Things are good, just busy with family stuff.",
	"I really needed to hear that, thank you.",
	"Sounds like you had a blast {time}!",
	"I'm thinking of taking a break from social media.",
	"Let's catch up properly next week, I miss our chats.",
	"My neighbour brought over cookies {time}, so sweet.",
	"I went to {place} for the first time, it was lovely.",
	"It's been a rough few days, but I'm okay.",
	"Have you been doing anything fun lately?",
	"I signed up for a newsletter about {thing}.",
	"That reminds me of when we went to {place} together.",
	"I'm so grateful for friends like you, {B}.",
	"We've been binge-watching a show about {thing}.",
	"Honestly, {thing} is the best part of my week.",
	"I had a long talk with my partner about {thing}.",
	"Keep me posted, I want to hear everything!",
}

var things = []string{
	"mental health", "saving money", "sleep", "climate change", "cooking at home", "learning languages",
	"photography", "gardening", "board games", "old movies", "meditation", "journaling", "running",
	"history podcasts", "our childhood", "moving abroad", "the kids' school", "a career change",
	"volunteering", "minimalism", "birdwatching", "video games", "jazz", "road trips",
}

var places = []string{
	"the lake", "the beach", "the farmers market", "the museum", "the mountains", "the old town",
	"my aunt's place", "the new cafe downtown", "the botanical garden", "the cinema", "the zoo",
	"the bookshop", "the night market", "the countryside",
}

var times = []string{"yesterday", "last weekend", "this morning", "on Friday", "last night", "over the holidays"}
