"""Text the demo study is generated from: ten everyday topics and the systems' stock phrases."""

# Each topic: slot values, opening turns, and questions with answers that fit them. The
# context ends with a question; its answers serve as references and the human response.
TOPICS = {
    "travel": {
        "slot": ["Lisbon", "Kyoto", "Iceland", "the Scottish Highlands", "Mexico City", "Vienna"],
        "open": [
            "I'm finally taking some time off and going to {slot} next month.",
            "My sister just got back from {slot} and now I want to go too.",
            "I booked a trip to {slot} for the spring!",
        ],
        "qa": [
            (
                "How long are you staying?",
                [
                    "About ten days. I want to see the old town and do a couple of day trips.",
                    "Only a week, so I'm trying not to cram too much into the plan.",
                    "Two weeks, if work lets me. I'd love to rent a car for part of it.",
                ],
            ),
            (
                "Are you going alone or with friends?",
                [
                    "With two friends from college, we've been planning it for a year.",
                    "Alone this time. I like choosing where to go each morning.",
                    "With my partner, it's our first real holiday together.",
                ],
            ),
            (
                "What are you most looking forward to?",
                [
                    "The food, honestly. I already have a list of places to eat.",
                    "Walking around without a plan and getting a little lost.",
                    "The landscapes. I've seen so many photos and want to see it for real.",
                ],
            ),
        ],
        "words": ["trip", "travel", "flight", "hotel", "visit"],
    },
    "cooking": {
        "slot": ["lasagna", "a Thai curry", "sourdough bread", "dumplings", "a lemon tart", "ramen"],
        "open": [
            "I tried making {slot} from scratch last night.",
            "I'm cooking {slot} for my parents on Sunday.",
            "I finally learned how to make {slot}.",
        ],
        "qa": [
            (
                "How did it turn out?",
                [
                    "Better than I expected, though I used too much salt in the sauce.",
                    "A little burnt on the bottom, but everyone still ate it.",
                    "Really good! I'm going to make it again this weekend.",
                ],
            ),
            (
                "Did you follow a recipe or just improvise?",
                [
                    "I followed a video recipe, but the timing was the tricky part.",
                    "My grandmother's recipe, written on an old card in her handwriting.",
                    "I improvised, which is probably why it took three hours.",
                ],
            ),
            (
                "What's the hardest part of making it?",
                [
                    "Getting the dough right. I had to start over twice.",
                    "Waiting. Everything needs to rest for hours before you can eat it.",
                    "Balancing the spices so it isn't too hot for my dad.",
                ],
            ),
        ],
        "words": ["cook", "recipe", "food", "kitchen", "dinner"],
    },
    "work": {
        "slot": ["a new job", "a promotion", "a difficult project", "a job interview"],
        "open": [
            "I have {slot} coming up and I can't stop thinking about it.",
            "Guess what, I just heard about {slot} at work.",
            "Work has been stressful lately because of {slot}.",
        ],
        "qa": [
            (
                "Are you excited or more worried about it?",
                [
                    "A bit of both. It's a great chance, but the hours will be long.",
                    "Mostly excited. I've wanted something like this for a while.",
                    "Worried, to be honest. I'm not sure I'm ready yet.",
                ],
            ),
            (
                "How are you preparing for it?",
                [
                    "I've been practising answers with a friend every evening this week.",
                    "Reading everything I can find and making lots of notes.",
                    "I asked a colleague who did it last year for advice.",
                ],
            ),
            (
                "What does your manager think?",
                [
                    "She's supportive, which helps a lot when things get hectic.",
                    "He thinks I should go for it and promised to help.",
                    "I haven't told her yet, I want to be sure first.",
                ],
            ),
        ],
        "words": ["work", "job", "boss", "office", "career"],
    },
    "pets": {
        "slot": ["a puppy", "a rescue cat", "two rabbits", "an old greyhound"],
        "open": [
            "We just adopted {slot}!",
            "My neighbour asked me to look after {slot} for a week.",
            "I finally brought home {slot} from the shelter.",
        ],
        "qa": [
            (
                "What's its name?",
                [
                    "We called her Biscuit, the kids chose it.",
                    "Pepper. She already answers to it, sort of.",
                    "He came with the name Captain, so we kept it.",
                ],
            ),
            (
                "How is it settling in?",
                [
                    "The first two days were hard, but now it follows me everywhere.",
                    "Slowly. It hides under the bed when the doorbell rings.",
                    "Really well, it sleeps on my feet every night.",
                ],
            ),
            (
                "Have you looked after an animal before?",
                [
                    "Never, so I've been reading a lot and asking the vet questions.",
                    "We had dogs when I was a kid, so I know the basics.",
                    "Only a goldfish, so this is a big step for me.",
                ],
            ),
        ],
        "words": ["dog", "cat", "pet", "animal", "vet"],
    },
    "sports": {
        "slot": ["a half marathon", "my first climbing competition", "a cycling race", "a swimming event"],
        "open": [
            "I signed up for {slot} this weekend.",
            "I've been training for {slot} for three months.",
            "My friend talked me into {slot} next month.",
        ],
        "qa": [
            (
                "How are you feeling about it?",
                [
                    "Nervous but ready. My knee feels much better than last month.",
                    "Excited! I just want to finish without stopping.",
                    "Terrified, but in a good way.",
                ],
            ),
            (
                "What does your training look like?",
                [
                    "Three sessions a week and one long one on Sundays.",
                    "Mostly early mornings before work, it's the only free time I have.",
                    "I follow a plan from an app and rest on Fridays.",
                ],
            ),
            (
                "Do you have a goal for it?",
                [
                    "Just to finish, the time doesn't matter this year.",
                    "I'd like to beat my time from last year by five minutes.",
                    "To enjoy it and not get injured.",
                ],
            ),
        ],
        "words": ["game", "team", "training", "sport", "race"],
    },
    "music": {
        "slot": ["the guitar", "the piano", "the drums", "singing lessons"],
        "open": [
            "I started learning {slot} a few weeks ago.",
            "I've signed up for {slot} at the community centre.",
            "I finally bought myself {slot} after years of wanting to.",
        ],
        "qa": [
            (
                "Is it hard?",
                [
                    "My fingers hurt, but I can already play two simple songs.",
                    "Harder than I thought, but the teacher is very patient.",
                    "The basics are fine, reading music is the hard part.",
                ],
            ),
            (
                "Do you practise every day?",
                [
                    "Twenty minutes every evening, it's become my way to relax.",
                    "Most days, except when I work late.",
                    "I try to, but my neighbours might not love it.",
                ],
            ),
            (
                "What kind of music do you want to play?",
                [
                    "Mostly old soul and some jazz, anything with a good groove.",
                    "Folk songs, the kind you can play around a fire.",
                    "The songs from the films I grew up with.",
                ],
            ),
        ],
        "words": ["music", "song", "band", "concert", "play"],
    },
    "movies": {
        "slot": ["the new space film", "an old black-and-white comedy", "a documentary about bees"],
        "open": [
            "We watched {slot} last night.",
            "I finally saw {slot} at the cinema.",
            "My brother made me watch {slot} yesterday.",
        ],
        "qa": [
            (
                "Was it any good?",
                [
                    "It was slow at the start, but the last hour was brilliant.",
                    "Really good, I laughed much more than I expected.",
                    "Not my favourite, but the music was beautiful.",
                ],
            ),
            (
                "Who did you go with?",
                [
                    "With my brother. We argued about the ending all the way home.",
                    "A few friends from work, we go every month.",
                    "Nobody, I like going to the cinema alone.",
                ],
            ),
            (
                "Would you watch it again?",
                [
                    "Definitely, I think I missed half the details.",
                    "Maybe at home, it's a bit long for the cinema.",
                    "Once was enough, but I'm glad I saw it.",
                ],
            ),
        ],
        "words": ["movie", "film", "cinema", "watch", "actor"],
    },
    "weather": {
        "slot": ["the storm", "this heatwave", "all this rain", "the first snow"],
        "open": [
            "Did {slot} keep you awake last night?",
            "I can't get used to {slot}.",
            "The news says {slot} will last until next week.",
        ],
        "qa": [
            (
                "Is your place okay?",
                [
                    "A branch fell in the garden, but the house is fine.",
                    "Yes, just a bit of water in the basement.",
                    "It's fine, though the power went out for an hour.",
                ],
            ),
            (
                "What do you do to cope with it?",
                [
                    "I keep the curtains closed and drink a lot of water.",
                    "I stay in with a book and tea, honestly it's nice.",
                    "I work from home on the worst days.",
                ],
            ),
            (
                "Are your plans for the weekend still on?",
                [
                    "We moved the picnic indoors, which is a bit sad.",
                    "We postponed the trip to next month.",
                    "Yes, we'll just bring umbrellas and hope for the best.",
                ],
            ),
        ],
        "words": ["weather", "rain", "cold", "hot", "storm"],
    },
    "study": {
        "slot": ["my statistics exam", "a history essay", "my thesis", "learning Spanish"],
        "open": [
            "I'm so behind on {slot}.",
            "I've been spending every evening on {slot}.",
            "I'm stuck on {slot}.",
        ],
        "qa": [
            (
                "What's the hardest part?",
                [
                    "The exercises. I understand the lectures but not the problems.",
                    "Starting. Once I write the first page the rest comes easier.",
                    "Remembering everything, there's just so much material.",
                ],
            ),
            (
                "When is the deadline?",
                [
                    "Friday, so I'm spending the whole week in the library.",
                    "In two weeks, which sounds like a lot but really isn't.",
                    "There's no fixed date, which is almost worse.",
                ],
            ),
            (
                "Do you study better alone or in a group?",
                [
                    "Alone, with my phone in another room, otherwise I get nothing done.",
                    "In a group, explaining things to others helps me understand.",
                    "Alone in the morning, with friends in the evening.",
                ],
            ),
        ],
        "words": ["exam", "study", "class", "homework", "school"],
    },
    "home": {
        "slot": ["a new flat", "the kitchen", "the garden", "our living room"],
        "open": [
            "We're finally redoing {slot}.",
            "I just moved into {slot} across town.",
            "I spent the whole weekend working on {slot}.",
        ],
        "qa": [
            (
                "How do you like it so far?",
                [
                    "I love it, though the heating makes strange noises at night.",
                    "It feels so good to finally have everything in place.",
                    "It's quiet, and there's a bakery on the corner that opens at six.",
                ],
            ),
            (
                "Did anyone help you?",
                [
                    "My cousin came over with his van, otherwise it would have taken days.",
                    "A few friends, I paid them in pizza.",
                    "No, I did it all myself, my back hurts.",
                ],
            ),
            (
                "What's left to do?",
                [
                    "Just the curtains and a few shelves.",
                    "Painting the bedroom, but that can wait a month.",
                    "Nothing, we're finally done!",
                ],
            ),
        ],
        "words": ["house", "home", "room", "flat", "move"],
    },
}
GREETINGS = ["Hey, long time no see!", "Hi! How was your week?", "Morning! Got a minute?", "Hey, how are you?"]

GENERIC = [
    "i don't know .",
    "i'm not sure what you mean .",
    "that's good .",
    "yes .",
    "i think so .",
    "i don't think so .",
    "what do you mean ?",
    "me too .",
    "that's nice .",
    "oh , okay .",
]
PARTIAL = [
    "i like {word} too .",
    "i think {word} is very good .",
    "what about the {word} ?",
    "i have a {word} .",
    "do you like {word} ?",
    "the {word} is good but i don't know .",
]
HEDGES = ["i think ", "well , ", "oh , ", "yeah , ", ""]
