"""Definitions written without the class name (issue 13, stop 26): the catalogue's several
descriptions per class, digits computed from arithmetic, and the wider aliases, with the real
bundled MiniLM. Each request here was answered 200 with a wrong class, or 422, by the stop-25
resolver (one dictionary definition per class, no arithmetic)."""

from __future__ import annotations

import pytest

from service.core.problems import Problem
from service.core.schemas import PersonalizeCreate
from service.core.settings import Settings
from service.kinds.numbers import digit_in, digit_of
from service.kinds.resolution import ClassResolver
from service.kinds.task_request import resolve_request


@pytest.fixture(scope="module")
def encoder():
    from service.kinds.taper import load_text_encoder

    return load_text_encoder(None, "cpu")


@pytest.fixture(scope="module")
def pacs(encoder):
    from trainer.data.catalogue import catalogue_json

    s = Settings()
    return ClassResolver(catalogue_json(), encoder, s.match_threshold, s.match_margin,
                         (s.match_described_threshold, s.match_described_margin))


def _resolve(resolver, **request) -> list[str]:
    matches, _ = resolve_request(resolver, PersonalizeCreate(**request), resolver.domains)
    return [m.name for m in matches]


@pytest.mark.parametrize(("phrase", "digit"), [
    ("the number after six", 7), ("half of eighteen", 9), ("3 + 4", 7), ("eleven minus two", 9),
    ("one less than ten", 9), ("The digit that comes right before 5.", 4), ("half a dozen", 6),
    ("twice four", 8), ("the square root of nine", 3), ("what you get from 2 times 3", 6),
    ("the number after ten", None), ("half of 7", None), ("two cats", None),
    ("four and five", None), ("0-4", None), ("8/2", None), ("the number of days in a week", 7),
    ("the number of months in a year minus four", 8), ("The answer to twelve divided by three.", 4),
    ("what you get if you add two and two, I think", 4), ("multiply three by three", 9),
    ("What you get when you take eight away from nine.", 1), ("a dozen minus three", 9),
    ("count the fingers on both hands and take away three", 7), ("six", None),
    ("the number of legs on a spider plus one", 9), ("months in a year", None),
    # stop 31 (held-out set 24, read): a spaced dash subtracts; both hands are ten fingers
    ("10 - 8", 2), ("9 − 2", 7), ("12 ÷ 4", 3), ("10-8", None),
    ("The number of fingers on both of your hands together.", None),  # was five, at 200
])
def test_digit_of_reads_only_whole_computations(phrase, digit):
    assert digit_of(phrase) == digit


@pytest.mark.parametrize(("definition", "digit"), [
    ("Fingers on one human hand; half of ten.", 5), ("Digit like an upside-down 6; 3 x 3.", 9),
    ("Half of four, or the count of shoes you put on each morning", 2),
    ("Sides of a triangle; wishes a genie grants.", 3),
    ("half of ten; or three plus three", None),  # two answers: left to the encoder
    ("an animal with four legs; twice as big as a dog", None),
])
def test_digit_in_reads_a_computing_clause(definition, digit):
    """Outsiders' definitions compute in one clause and describe in another; stop 28's resolver
    read none of these (the encoder put 'three times three' nearest to three)."""
    assert digit_in(definition) == digit


def test_computed_digits_are_exact_matches(pacs):
    """The encoder put 'the number after six' nearest to six (the stop-25 answer: six, eight)."""
    assert _resolve(pacs, classes=["the number after six", "half of eighteen"]) == [
        "seven", "nine"]
    assert _resolve(pacs, description="the number after six and the number before three") == [
        "seven", "two"]
    with pytest.raises(Problem):  # ten is no digit: no class is guessed for it
        _resolve(pacs, classes=["the number after nine", "half of eighteen"])


def test_descriptions_find_classes_described_in_other_words(pacs):
    """One dictionary definition per class sent 'summer footwear…' to ankle boot and 'a small
    pet that purrs' to dog, at 200."""
    assert _resolve(pacs, classes=["summer footwear that leaves the toes bare",
                                   "a farm animal that gives milk", "a small pet that purrs"]) \
        == ["sandal", "cow", "cat"]  # fmt: skip


def test_a_user_catalogue_s_descriptions_are_views(encoder):
    """Descriptions come from the artifact's catalogue, whoever wrote it: without them the same
    definition matches nothing well enough."""
    classes = [{"name": "pipette", "definition": "A laboratory tool."},
               {"name": "beaker", "definition": "A laboratory container."},
               {"name": "burette", "definition": "A laboratory tube."}]
    described = [{**classes[0], "descriptions": ["a thin glass dropper that sucks up a small "
                                                 "measured volume of liquid"]}, *classes[1:]]
    request = {"classes": ["a glass dropper for sucking up a little liquid",
                           "a laboratory container", "a laboratory tube"]}
    with pytest.raises(Problem):
        _resolve(ClassResolver({"classes": classes, "domains": []}, encoder, 0.55, 0.04),
                 **request)
    assert _resolve(ClassResolver({"classes": described, "domains": []}, encoder, 0.55, 0.04),
                    **request) == ["pipette", "beaker", "burette"]  # fmt: skip


def test_context_ignores_descriptions(pacs):
    """'savanna' is in the giraffe's descriptions; a sentence about camera traps on the savanna
    is still context, not a class."""
    ignored: list[str] = []
    request = PersonalizeCreate(description="We're a wildlife NGO. Our camera traps take photos "
                                "on the savanna and we sort them into elephant, giraffe and zebra.")
    matches, _ = resolve_request(pacs, request, pacs.domains, ignored)
    assert [m.name for m in matches] == ["elephant", "giraffe", "zebra"] and ignored


@pytest.mark.parametrize(("description", "classes"), [
    ("beagles, tabbies and horses", ["dog", "cat", "horse"]),
    ("tees / jeans / hoodies", ["t-shirt", "trouser", "pullover"]),
    ("budgies vs holsteins", ["bird", "cow"]),
])
def test_breeds_and_everyday_names_are_aliases(pacs, description, classes):
    assert _resolve(pacs, description=description) == classes


# ---- an outside review of the first stop-26 commit (1a6f5e6): each was a wrong class at 200 there


@pytest.mark.parametrize("description", [
    "classify hats and coats", "spiders and cats", "triangles, squares and hexagons",
    "wedding photos and sneakers", "mice and dogs",  # short names saw the descriptions
    "rubber duck, cats and dogs", "water polo and horses", "bulldog clips and bags",
    "turtles and dogs",  # aliases with another common sense ("turtleneck")
    "deer and horses", "suits and dresses",  # names at the looser described-mention margin
    "cats and dogs, half of 10",  # an amount, not a digit, inside a description
])
def test_review_findings_are_refused(pacs, description):
    with pytest.raises(Problem):
        _resolve(pacs, description=description)


@pytest.mark.parametrize(("request_", "classes"), [
    ({"description": "photos of cats and dogs from after 6"}, ["cat", "dog"]),
    ({"description": "tell apart these three four five"}, ["three", "four", "five"]),
    ({"description": "I need those two: cats and dogs"}, ["cat", "dog"]),
    ({"classes": ["half of eighteen", "a cat"]}, ["nine", "cat"]),
])
def test_review_findings_numbers(pacs, request_, classes):
    assert _resolve(pacs, **request_) == classes


@pytest.mark.parametrize("count", ["the number of months in a year", "the number of hours in a day",
                                   "the number of players on a football team",
                                   "the number of wheels on a lorry"])
def test_counts_unlike_a_catalogue_fact_are_asked_back(pacs, count):
    """MiniLM answers 'how many …' by association: months in a year → four (0.78, from 'the
    number of seasons in a year'), planets → seven, a football team → nine, at 200 without the
    stricter bar for counts."""
    with pytest.raises(Problem) as err:
        _resolve(pacs, classes=[count, "a cat"])
    unknown = err.value.extra["unknown"]
    assert unknown[0]["phrase"] == count and unknown[0]["did_you_mean"]


def test_a_count_that_paraphrases_a_catalogue_fact_resolves(pacs):
    assert _resolve(pacs, classes=["how many legs a spider has", "the number of days in a "
                                   "week", "a cat"]) == ["eight", "seven", "cat"]  # fmt: skip


@pytest.mark.parametrize(("description", "classes", "domain"), [
    ('["kitten", "puppy", "pony"]', ["cat", "dog", "horse"], None),
    ('{"classes": ["cat", "dog", "bird"], "style": "cartoon"}', ["cat", "dog", "bird"], "cartoon"),
    ("{ task: 'classify', labels: ['T-shirt', 'Dress'], images: 'studio photos' }",
     ["t-shirt", "dress"], "photo"),  # YAML flow style
    ('the model distinguishes "sandal", "sneaker" and "ankle boot"', ["sandal", "sneaker",
                                                                      "ankle boot"], None),
    ("- [ ] zero\n- [ ] nine\n- [ ] eight", ["zero", "nine", "eight"], None),
])
def test_requests_written_as_data_or_markup(pacs, description, classes, domain):
    """Stop 25 refused every quote, bracket and pipe as an injection (outside set 7: 8 rows)."""
    matches, got = resolve_request(pacs, PersonalizeCreate(description=description),
                                   pacs.domains)
    assert ([m.name for m in matches], got) == (classes, domain)


@pytest.mark.parametrize("text", [
    "SELECT * FROM classes WHERE 1", "cats or 1=1", "cats, dogs /* admin */",
    "<b>cats</b> and dogs",
    # a second outside review (stop 26): each added or dropped a class at 200
    "{{7*7}} cats and dogs", "kittens, puppies ${7*7}", "cats, dogs' || '1'='1",
    "kittens, puppies' OR 2>1 #", "cats, dogs\n-- drop everything\nhorses",
    "cats=1 dogs=1 horses=0", "| zebras | giraffes | horses |\n| yes | yes | no |",
    '["zero", "one", 7]', '{"classes": ["cat", "dog"], "also": "horse"}',  # may hold classes
    '{"classes": ["kittens", "puppies"], "exclude": ["cats"]}',  # asked for and excluded
    '{"classes": ["cats", "dogs"], "app": ["horses"]}',  # metadata holds one plain value
    '{"classes": ["kittens"], "x": "\\u003cimg src=x onerror=alert(1)\\u003e"}',
    "[" * 999 + "]" * 999,  # json.loads raised RecursionError: a 500
])
def test_sql_markup_templates_and_unknown_fields_are_refused(pacs, text):
    with pytest.raises(Problem) as err:
        _resolve(pacs, description=text)
    assert err.value.status == 422


@pytest.mark.parametrize(("description", "classes"), [
    ("we need: bear, cat, dog — but NOT horses, horses are handled by another service",
     ["bear", "cat", "dog"]),  # outside set 8: horse at 200
    ("It classifies a garment as dress, coat or trousers. Bags are out of scope.",
     ["dress", "coat", "trouser"]),  # outside set 9: bag at 200
    ("cats and dogs, horses not needed", ["cat", "dog"]),
    ("auto-tag trousers, coats and bags; the old model called everything 'bag'",
     ["trouser", "coat", "bag"]),  # "everything" negates its own chunk only
])
def test_a_class_excluded_anywhere_is_excluded_everywhere(pacs, description, classes):
    assert _resolve(pacs, description=description) == classes


def test_a_bare_hypernym_is_not_the_class_of_a_longer_alias(pacs):
    """'shoes' leaned to sneaker through 'running shoe' (outside sets 8 and 9: sneaker at 200);
    'running shoes' still is a sneaker."""
    with pytest.raises(Problem):
        _resolve(pacs, description="can it recognise shoes vs bags?")
    assert _resolve(pacs, description="running shoes and sandals") == ["sneaker", "sandal"]


def test_a_long_mention_ending_in_a_class_names_it_but_a_listed_definition_describes(pacs):
    """In a description, '… but it should also flag cats' names cats: read as a description
    it went to bird, and the request answered [bird, dog] at 200 (now asked back, since the
    clause around 'cats' is no class). In a classes list, '… herded by collies' is a
    definition, compared with the descriptions: sheep first (stop 26: too close to dog to
    answer; stop 27's descriptions of flocks and sheepdogs answer it)."""
    with pytest.raises(Problem):
        _resolve(pacs, description="I'm building a birdwatching-ish app but it should also "
                 "flag cats and dogs near the feeder")
    # stop-26 intermediate: dog at 200, by 'collie'
    assert _resolve(pacs, classes=["flock animal that bleats and is herded by collies",
                                   "a cat"]) == ["sheep", "cat"]  # fmt: skip


@pytest.mark.parametrize(("description", "classes"), [
    ("cats, dogs, horses, but not hot dogs", ["cat", "dog", "horse"]),
    ("bears, dogs and cats, but no teddy bears", ["bear", "dog", "cat"]),
    ("cats, dogs and horses; without horses the model is useless", ["cat", "dog", "horse"]),
    ("cats and dogs out of the shelter, and horses", ["cat", "dog", "horse"]),
    ("I need one, two and three", ["one", "two", "three"]),
])
def test_second_review_negations_and_pronouns_keep_classes_asked_for(pacs, description,
                                                                     classes):
    """Each dropped a class asked for, at 200, before the negation carried only a bare class
    ('not hot dogs' excluded dog) and 'need one' was a pronoun before a list."""
    assert _resolve(pacs, description=description) == classes


def test_a_class_both_asked_for_and_excluded_is_asked_back(pacs):
    with pytest.raises(Problem) as err:
        _resolve(pacs, description="cats, dogs and horses, not just horses")
    assert err.value.slug == "ambiguous-classes"


def test_counts_written_without_number_of_need_the_count_bar(pacs):
    with pytest.raises(Problem):  # was four, at 200
        _resolve(pacs, classes=["months in a year", "cats"])


def test_a_rare_word_decides_a_description(pacs):
    """'short sleeves' is a t-shirt's and 'strappy' a sandal's: without the word overlap
    (:mod:`service.kinds.lexical`) the encoder leaves both too close to answer."""
    request = {"classes": ["casual top with short sleeves and a round neck, worn in summer",
                           "A strappy, open-toed shoe worn in hot weather, like those of ancient "
                           "Rome."]}
    assert _resolve(pacs, **request) == ["t-shirt", "sandal"]
    weight, pacs._lexical.weight = pacs._lexical.weight, 0.0
    try:
        with pytest.raises(Problem):
            _resolve(pacs, **request)
    finally:
        pacs._lexical.weight = weight


def test_word_overlap_weighs_rare_words_and_survives_a_stop_word_catalogue():
    from service.kinds.lexical import Lexical

    lexical = Lexical([{"name": "elephant", "descriptions": ["a grey animal with a trunk"]},
                       {"name": "giraffe", "descriptions": ["an animal with a long neck"]}])
    scores = lexical.scores(["a trunk", "an animal"])
    assert scores[0, 0] > 0 == scores[0, 1] and scores[1, 0] == pytest.approx(scores[1, 1])
    assert Lexical([{"name": "the"}, {"name": "a"}]).scores(["the"]).shape == (1, 2)


@pytest.mark.parametrize(("definition", "digit"), [
    ("legs on a dog", 4), ("the number of leg of a cow", 4), ("how many legs a spider has", 8),
    ("how many fingers are on one hand", 5), ("the number of dwarfs in Snow White", 7),
    ("how many fingers I have on both hands, take away a finger", 9),
    ("the number of legs on a spider, take away a single leg", 7),
    ("the number which come after 4 and before 6", 5), ("the number after 4 and before 9", None),
    ("the number between 4 and 6", 5), ("between 3 and 9", None),
    ("an animal with four legs", None), ("months in a year", None),
])
def test_known_counts_are_read(definition, digit):
    """Set 19 answered 'legs on a spider, take away a single leg' with eight at 200; set 20's
    'legs on a dog' and 'points on a starfish' came back 422."""
    assert digit_in(definition) == digit


def test_a_style_opening_every_definition_gives_the_domain(pacs):
    """Two wrong 200s of set 19 (no domain; its writer said sketch and art_painting)."""
    request = PersonalizeCreate(classes=["a pencil sketch of the animal that says baa",
                                         "a pencil sketch of the farm animal that gives milk"])
    matches, domain = resolve_request(pacs, request, pacs.domains)
    assert ([m.name for m in matches], domain) == (["sheep", "cow"], "sketch")
    request = PersonalizeCreate(classes=["a herd of cows", "a flock of birds"])
    assert resolve_request(pacs, request, pacs.domains)[1] is None  # "herd" is no style


def test_a_definition_may_negate_inside_but_not_ask_for_an_absence(pacs):
    """'put on over everything else' and 'never forgets' refused 14 read definition rows as
    negated; 'anything but dogs' and 'not a cat' still are."""
    assert _resolve(pacs, classes=["heavy outer garment you put on over everything else in "
                                   "winter", "the animal that never forgets and has a trunk"]) \
        == ["coat", "elephant"]  # fmt: skip
    for negated in ("anything but dogs", "not a cat at all", "bags are out of scope for now"):
        with pytest.raises(Problem, match="negated"):
            _resolve(pacs, classes=[negated, "cats"])


def test_a_computation_that_gives_no_digit_is_asked_back(pacs):
    """The encoder answered 'subtract three from two' with zero (0.70) once it was described."""
    with pytest.raises(Problem):
        _resolve(pacs, classes=["What you get when you subtract three from two", "a cat"])


def test_materials_and_short_rests_are_no_style_openings(pacs):
    request = PersonalizeCreate(classes=["Real leather: the animal that gives milk on a farm",
                                         "Canvas: the striped animal of the African savanna"])
    assert resolve_request(pacs, request, pacs.domains)[1] is None  # "real" was photo
    with pytest.raises(Problem):  # "a goat" alone, stripped, was a sheep
        _resolve(pacs, classes=["an oil painting of a goat", "an oil painting of a cow"])


def test_a_count_of_ten_is_no_digit(pacs):
    """Set 21 answered 'counting all the fingers on both hands' (10) with five at 200."""
    with pytest.raises(Problem):
        _resolve(pacs, classes=["the number you get by counting all the fingers on both hands",
                                "the number of legs on a dog"])


def test_a_listed_definition_may_name_another_class(pacs):
    """'related to the horse, with a … striped coat' named horse and coat: 422
    ambiguous-classes at stop 28; a definition compares, it asks for one class."""
    assert _resolve(pacs, classes=["African wild grazer related to the horse, with a "
                                   "black-and-white striped coat", "a pet that purrs"]) == [
        "zebra", "cat"]
    with pytest.raises(Problem, match="several classes"):
        _resolve(pacs, classes=["cats and dogs", "birds"])  # a short one still names two
