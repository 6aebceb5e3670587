"""Email replies, translations glossed by a class and a message's own register, since stop 33
(issue 13; held-out sets 30 and 31), with the real bundled MiniLM over Tailor-PACS. Each case
but the guards was a 422 on the stop-32 resolver."""

from __future__ import annotations

import pytest
from service_testkit import resolve_description as _resolve

from service.core.problems import Problem
from service.kinds.emails import newest
from service.kinds.pasted import checked

REPLY = """Hi all,

Change of plan: only zebras and giraffes. No elephants.

Thanks,
Sam Okafor
Head of Product | SafariSnap
+44 20 7946 0018

> On Mon, 3 Nov, Lee Park wrote:
> Could we start with zebras, giraffes and elephants?"""


def test_a_reply_is_its_new_message_without_thread_or_signature(pacs):
    ignored: list[str] = []
    assert _resolve(pacs, REPLY, ignored)[0] == ["zebra", "giraffe"]
    assert any("Sam Okafor" in cut for cut in ignored)  # the signature, with its "|", is cut
    assert any("wrote:" in cut for cut in ignored)
    assert any("Could we start" in cut for cut in ignored)  # the thread, reported back


def test_newest_keeps_the_thread_only_where_the_reply_adds_to_it(pacs):
    text, _ = newest(REPLY, pacs.class_word)
    assert "Could we start" not in text and "Okafor" not in text and "No elephants" in text
    adding = "Please also add zebras.\n\n> cats and dogs"  # "also": both are read
    assert newest(adding, pacs.class_word)[0] == adding
    assert _resolve(pacs, adding)[0] == ["zebra", "cat", "dog"]
    assert _resolve(pacs, "Add horses.\n\n> cats, dogs")[0] == ["horse", "cat", "dog"]
    quoting = "Spec from the wiki:\n> classify zebras and giraffes\n> pencil sketches only"
    assert newest(quoting, pacs.class_word) == (quoting, [])  # no reply: the quote is the ask
    inline = "> Proposed: sheep, cows, horses\nYes to sheep and cows\n> Also dogs?\nNo"
    assert newest(inline, pacs.class_word) == (inline, [])  # answered line by line


@pytest.mark.parametrize("text", [  # hedges in the reply: the older list must not answer them
    "Not sure about horses, let me check with the farmer.\n\n> sheep, cows, horses, dogs",
    "cats and dogs; undecided (birds)",  # an English word glossed: no translation
])
def test_a_reply_that_decides_nothing_is_asked_back(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes"), [
    ("Necesito: caballos (horses), vacas (cows) and ovejas (sheep)", ["horse", "cow", "sheep"]),
    ("classes: Katze (cat) and Hund (dog), nothing else", ["cat", "dog"]),
    ("Madam, I want a classifier for 4, 5 and 6 only", ["four", "five", "six"]),
    ("configure coats and dresses for the rental kiosk", ["coat", "dress"]),
])
def test_translations_and_a_messages_own_words(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize("text", [
    "caballos (horses), vacas (cows), cabras (goats)",  # a gloss naming no class stays unknown
    "Spec from the wiki:\n> classify zebras and giraffes\n> also okapis",  # no reply
])
def test_refused_when_a_gloss_or_a_quote_names_something_else(pacs, text):
    with pytest.raises(Problem):
        _resolve(pacs, text)


@pytest.mark.parametrize(("text", "classes"), [
    # a sentence that waves off the classes it names (were wrong 200s with those classes)
    ("We need zebras and giraffes. Kids also draw dogs and cats but we don't need those.",
     ["zebra", "giraffe"]),
    ("cats and dogs please; the owner's horse shows up sometimes but ignore it", ["cat", "dog"]),
    ("Bears and birds. (The ranger wears a coat in every shot, but that's irrelevant.)",
     ["bear", "bird"]),
    ("zebras vs horses - pls no birds, we don't need those", ["zebra", "horse"]),  # guard
    # a Markdown task list that picks classes, a chat without times, an "Include?" column
    ("Classes for the farm app:\n- [x] cow\n- [ ] dog\n- [x] sheep\n- [x] horse",
     ["cow", "sheep", "horse"]),
    ("Ana: we need sandals and sneakers\nLi: and ankle boots?\nAna: yes, add those\n"
     "Li: ok, sandals, sneakers, ankle boots then", ["sandal", "sneaker", "ankle boot"]),
    ("| Class | Include? |\n|---|---|\n| Cat | yes |\n| Dog | no |\n| Bird | yes |\n"
     "| Cow | yes |", ["cat", "bird", "cow"]),
])
def test_dismissals_task_lists_chats_and_tables(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_a_to_do_list_is_no_class_form(pacs):
    """Its ticked box is work done, not a class: the open boxes hold the request."""
    todo = "TODO\n- [x] login screen\n- [ ] classifier: zebras vs horses\n- [ ] dark mode"
    assert checked(todo, pacs.known.class_of) == todo
    assert checked("- [x] cow\n- [ ] dog\n- [x] sheep", pacs.known.class_of) == "- cow\n- sheep"
    done = "- [x] label cats\n- [x] label dogs\n- [ ] label horses"  # an outside review
    assert checked(done, pacs.known.class_of) == done


@pytest.mark.parametrize(("text", "classes"), [
    ("everything in the clothing list except bags",  # "list" read as the group's noun
     ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker",
      "ankle boot"]),
    ("We need footwear only. No clothes, no bags.", ["sandal", "sneaker", "ankle boot"]),
    ("every clothing class please. Footwear and the bag also included.",
     ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag",
      "ankle boot"]),
])
def test_groups_their_sub_groups_and_what_is_included(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_a_group_left_out_spares_only_a_whole_sub_group(pacs):
    with pytest.raises(Problem):  # two of three footwear classes: which clothes are out?
        _resolve(pacs, "sneakers and sandals, no clothes")


@pytest.mark.parametrize(("text", "classes"), [  # held-out sets 32 and 33: wrong 200s before
    ("real photos of my dog, cat & cow. actually the cow got sold, drop it.", ["dog", "cat"]),
    ("It needs to recognise:\n• dresses\n• coats\n• shirts (button-up ones, not tees)\n• bags",
     ["dress", "coat", "shirt", "bag"]),  # "ones" was the digit one
    ("Classes needed: tees, pants, jumpers, dresses. Four in total.",
     ["t-shirt", "trouser", "pullover", "dress"]),
    ("tees, shirts, pullovers and coats. Classifier for those 4, please.",
     ["t-shirt", "shirt", "pullover", "coat"]),
    ("tag horses, dogs or cattle. Sheep show up too, but the curators said they're out of "
     "scope for this phase.", ["horse", "dog", "cow"]),
])
def test_pronouns_counts_and_what_a_sentence_drops(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


@pytest.mark.parametrize(("text", "classes"), [
    ("Include: cats, dogs\nExclude: birds\nInclude: horses", ["cat", "dog", "horse"]),  # no chat
    ("5000 images of cows and sheep, about 2500 each", ["cow", "sheep"]),  # an amount
])
def test_form_labels_are_no_speakers_and_amounts_no_classes(pacs, text, classes):
    assert _resolve(pacs, text)[0] == classes


def test_an_english_word_glossed_by_a_class_stays_unknown(pacs):
    """Only a word the encoder's vocabulary lacks is a translation ("gato (cat)")."""
    for text in ("wolves (dogs) and sheep", "hotdogs (dogs) and cats"):
        with pytest.raises(Problem):
            _resolve(pacs, text)
