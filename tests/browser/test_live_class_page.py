"""A live class in real Chromium against the real server (issue 26): one teacher page and three
students (one on a phone, one reading Russian) follow, pause, go free and come back; the class
answers a question the pulse has not shown, a student reloads mid-question, the board is
revealed; a student who tries to drive is refused. The last test runs two server processes
sharing one Redis: the teacher on one, the students on the other.

The right values come from the API itself (POST /api/graph, correct and `mode: overwrite`), not
from the class's code."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
from servers import start_server, stop_server
from websockets.sync.client import connect

from chainrule import engine
from tests.browser.conftest import VIEWPORT, forget, keep_renderer

pytestmark = pytest.mark.browser

READY = "svg[data-testid=graph][data-ready=true]"
DIAMOND = "a = 2\nb = a + 1\nc = a * 3\nd = b * c"


def revealed_board(teacher):
    """The teacher reveals the answers: the board and its bars, each (value, right, diagnosis,
    count) as its data-* attributes say."""
    teacher.click("[data-testid=class-reveal]")
    board = teacher.locator("#class-board-dialog [data-testid=class-board]")
    board.wait_for()
    bars = board.locator(".board-bar")
    shown = {
        (bars.nth(i).get_attribute("data-value"), bars.nth(i).get_attribute("data-right"),
         bars.nth(i).get_attribute("data-diagnosis"), bars.nth(i).get_attribute("data-count"))
        for i in range(bars.count())
    }  # fmt: skip
    return board, shown


def new_page(browser, base_url: str, width: int = 1280, height: int = 720, errors=None):
    """A page in a new context of its own (the two servers' test: another origin a role)."""
    context = browser.new_context(viewport={"width": width, "height": height}, base_url=base_url)
    return watched(context.new_page(), errors)


def watched(page, errors=None):
    """`page` with a 10 s timeout, its uncaught errors and CSP violations in `page.errors`."""
    page.set_default_timeout(10_000)
    page.errors = [] if errors is None else errors
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on(
        "console",
        lambda m: page.errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    return page


@pytest.fixture(scope="module")
def roles(browser, live_server) -> Iterator[dict]:
    """A browser context for each role of a class (the teacher, three students), kept for the
    module: a role's storage is its own, as on four machines, while its HTTP cache and its
    renderer (a keeper page, conftest.keep_renderer) serve each test's pages, instead of ~90
    files fetched and a renderer started for each of four pages a test."""
    made = {}
    for role in ("teacher", "student0", "student1", "student2"):
        made[role] = browser.new_context(viewport=VIEWPORT, base_url=live_server)
        made[role].keeper = keep_renderer(made[role])
    yield made
    for context in made.values():
        context.close()


@pytest.fixture
def role_page(roles) -> Iterator:
    """`role_page(role, width, height)`: a new page in the role's context, at that size. After
    the test, each role's context is left as it found it (conftest.forget: no page but its
    keeper, no local storage such as the student's name, no cookie, no permission)."""

    def make(role: str, width: int = 1280, height: int = 720):
        page = roles[role].new_page()
        if (width, height) != (VIEWPORT["width"], VIEWPORT["height"]):
            page.set_viewport_size({"width": width, "height": height})
        return watched(page)

    yield make
    for context in roles.values():
        forget(context)


def step_of(page) -> int:
    return int(page.evaluate("document.body.dataset.stepIndex"))


def wait_step(page, step: int) -> None:
    page.wait_for_function(f"() => document.body.dataset.stepIndex === '{step}'")


def state_of(page) -> str:
    return page.get_attribute("[data-testid=class-status]", "data-state")


def wait_state(page, state: str) -> None:
    page.wait_for_selector(f"[data-testid=class-status][data-state={state}]")


def start_class(teacher, preset: str = "diamond") -> str:
    teacher.goto(f"/?preset={preset}")
    teacher.wait_for_selector(READY)
    teacher.click("[data-testid=class-start]")
    code = teacher.locator("[data-testid=class-code]").inner_text()
    return code


@pytest.fixture
def classroom(role_page) -> Iterator[dict]:
    """A teacher page with a class started on the diamond, and three students following it."""
    teacher = role_page("teacher")
    code = start_class(teacher)
    students = [
        role_page("student0"),
        role_page("student1", 390, 844),  # a phone
        role_page("student2", 800, 600),
    ]
    paths = [f"/c/{code}", f"/c/{code.lower()}?lang=ru", f"/c/{code.replace('-', '')}"]
    for student, path in zip(students, paths, strict=True):
        student.goto(path)
    for student in students:
        wait_state(student, "following")
        student.wait_for_selector(READY)
    teacher.click("[data-testid=class-join-close]")
    teacher.wait_for_selector("[data-testid=class-students][data-count='3']")
    yield {"teacher": teacher, "students": students, "code": code}
    for page in (teacher, *students):
        assert page.errors == [], page.errors


# The smallest font size among the visible texts under a selector, and whose.
SMALLEST_TEXT = """(selector) => {
    const root = document.querySelector(selector);
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let smallest = { px: Infinity, text: "" };
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const owner = node.parentElement;
        if (!node.data.trim() || !owner.checkVisibility()) continue;
        const px = parseFloat(getComputedStyle(owner).fontSize);
        if (px < smallest.px) smallest = { px, text: node.data.trim() };
    }
    return smallest;
}"""


def grad_of(base_url: str, source: str, node: str, mode: str = "correct") -> float:
    body = {"source": source, "mode": mode}
    nodes = httpx.post(f"{base_url}/api/graph", json=body, timeout=10).json()["nodes"]
    return next(n["grad"] for n in nodes if n["id"] == node)


def test_students_follow_pause_go_free_and_come_back(classroom, screenshots_dir):
    teacher, students = classroom["teacher"], classroom["students"]
    for _ in range(6):
        teacher.click("[data-testid=step-forward]")
    wait_step(teacher, 6)
    for student in students:
        wait_step(student, 6)
    # A leaf's value: every student's graph has the teacher's numbers.
    teacher.locator("[data-testid=slider-a] input.slider-value").fill("4")
    teacher.wait_for_selector("[data-testid=node][data-node-id=n0][data-data='4']")
    for student in students:
        student.wait_for_selector("[data-testid=node][data-node-id=n0][data-data='4']")
        assert step_of(student) == step_of(teacher)
    # Toggles and a lesson stop travel too.
    teacher.click("#toggle-fold")
    for student in students:
        student.wait_for_function("() => document.querySelector('#toggle-fold').checked")
    teacher.click("[data-testid=view-3d]")
    for student in students:
        student.wait_for_selector("[data-testid=view-3d][aria-pressed=true]")
        student.wait_for_selector("[data-testid=graph-3d]")
    teacher.click("[data-testid=view-3d]")  # one switch: back to 2D
    for student in students:
        student.wait_for_selector("[data-testid=view-3d][aria-pressed=false]")
    teacher.select_option("[data-testid=lessons]", "diamond")
    teacher.wait_for_selector("[data-testid=lesson][data-lesson=diamond]")
    teacher.click("[data-testid=lesson-next]")
    stop = teacher.get_attribute("[data-testid=lesson]", "data-stop")
    for student in students:
        student.wait_for_selector(f"[data-testid=lesson][data-lesson=diamond][data-stop='{stop}']")
        wait_step(student, step_of(teacher))
    students[1].screenshot(path=str(screenshots_dir / "live-class-student-phone.png"))
    # The student's own keys do not take it off the teacher's step while following.
    students[0].keyboard.press("End")
    wait_step(students[0], step_of(teacher))

    teacher.click("[data-testid=class-pause]")
    for student in students:
        wait_state(student, "paused")
        assert student.locator("[data-testid=class-paused]").is_visible()
    assert (
        students[1].locator("[data-testid=class-status]").inner_text() == "Пауза: смотрите на доску"
    )

    teacher.click("[data-testid=class-free]")
    for student in students:
        wait_state(student, "free")
    explorer = students[0]
    assert explorer.locator("[data-testid=source]").is_visible()  # the page is theirs again
    explorer.click("[data-testid=lesson-close]")
    explorer.keyboard.press("Home")
    wait_step(explorer, 0)

    teacher.click("[data-testid=class-gather]")
    for student in students:
        wait_state(student, "following")
        wait_step(student, step_of(teacher))
    explorer.wait_for_selector("[data-testid=lesson][data-lesson=diamond]")
    assert not explorer.locator("[data-testid=source]").is_visible()


def test_the_class_predicts_a_gradient_and_the_board_names_the_mistakes(
    classroom, live_server, screenshots_dir
):
    teacher, students = classroom["teacher"], classroom["students"]
    truth = grad_of(live_server, DIAMOND, "n0")
    forgot = grad_of(live_server, DIAMOND, "n0", mode="overwrite")
    other_path = {6.0: 9.0, 9.0: 6.0}[forgot]  # a's two contributions: 6 through b, 9 through c
    assert truth == 15.0

    teacher.select_option("[data-testid=class-ask-what]", "grad:n0:null")
    teacher.click("[data-testid=class-ask]")
    for student in students:
        student.wait_for_selector("[data-testid=class-question][data-open=true]")
    assert students[0].locator("label.class-prompt").inner_text() == "Predict grad[a] ="
    # The teacher plays the whole pass; the class waits before the pulse reaches a.
    teacher.click("#to-end")
    teacher.wait_for_selector("[data-testid=node][data-node-id=n0][data-grad='15']")
    hold = None
    for student in students:
        student.wait_for_function("() => Number(document.body.dataset.stepIndex) > 0")
        hold = step_of(student)
        assert student.get_attribute("[data-testid=node][data-node-id=n0]", "data-grad") == ""
        assert hold < step_of(teacher)

    students[0].fill("[data-testid=class-name]", "Ann <i>")
    students[0].press("[data-testid=class-name]", "Tab")  # a change: the server hears the name
    for student, answer in zip(students, [15, forgot, other_path], strict=True):
        student.fill("[data-testid=class-answer]", str(answer).replace("-", "\u2212"))
        student.click("[data-testid=class-answer-send]")
        student.wait_for_selector("[data-testid=class-answer-status][data-acked=true]")
    teacher.wait_for_selector("[data-testid=class-answers][data-count='3']")

    # A reload mid-question lands on the held step, with the answer it sent and the question open.
    reloader = students[2]
    reloader.reload()
    wait_state(reloader, "following")
    reloader.wait_for_selector("[data-testid=class-question][data-open=true]")
    reloader.wait_for_selector("[data-testid=class-answer-status][data-acked=true]")
    assert (
        str(int(other_path)) in reloader.locator("[data-testid=class-answer-status]").inner_text()
    )
    wait_step(reloader, hold)

    teacher.check("[data-testid=class-names]")
    board, shown = revealed_board(teacher)
    assert board.get_attribute("data-total") == "3" and board.get_attribute("data-right") == "1"
    assert shown == {("15", "true", "", "1"), (str(int(forgot)), "false", "overwrite", "1"),
                     (str(int(other_path)), "false", "one_path", "1")}  # fmt: skip
    mistakes = board.locator("[data-testid=class-mistakes]").inner_text()
    assert "forgot the +=: 1" in mistakes
    # Names were asked for: the one student who gave one is named, as text.
    assert board.locator(".board-bar[data-right=true] .board-bar-names").inner_text() == "Ann <i>"
    assert board.locator(".board-bar-names").count() == 1
    teacher.screenshot(path=str(screenshots_dir / "live-class-board.png"))

    verdicts = [s.locator("[data-testid=class-verdict]") for s in students]
    for verdict, expected in zip(verdicts, ["right", "wrong", "wrong"], strict=True):
        verdict.wait_for()
        assert verdict.get_attribute("data-verdict") == expected
    assert verdicts[0].inner_text() == "Right: grad[a] = 15."
    assert "забыли +=" in verdicts[1].inner_text()  # the phone reads Russian
    assert verdicts[1].inner_text().startswith("Не совсем: grad[a] = 15.")
    students[1].screenshot(path=str(screenshots_dir / "live-class-student-verdict.png"))
    # Revealed: the class moves on to the teacher's step.
    for student in students:
        wait_step(student, step_of(teacher))
        student.wait_for_selector("[data-testid=node][data-node-id=n0][data-grad='15']")

    # The board presenting (large type, the teacher's dark theme): what the room sees.
    teacher.click("[data-testid=class-board-close]")
    teacher.keyboard.press("p")
    teacher.wait_for_function("() => document.body.classList.contains('presenting')")
    teacher.click("[data-testid=class-board-open]")
    # Every text of the board at 20 CSS px or more (its captions and names were 12-13 px).
    smallest = teacher.evaluate(SMALLEST_TEXT, "#class-board-dialog [data-testid=class-board]")
    assert smallest["px"] >= 20, smallest
    teacher.screenshot(path=str(screenshots_dir / "live-class-board-presenting.png"))
    teacher.click("[data-testid=class-board-close]")
    teacher.click("[data-testid=class-show-code]")
    teacher.screenshot(path=str(screenshots_dir / "live-class-code-presenting.png"))


# The page's store (static/js/main.js exports its scope), and a record of every step it shows.
RECORD_STEPS = """async () => {
    const { store } = (await import(document.querySelector('script[type=module]').src)).scope;
    window.stepsShown = [];
    store.subscribe((s, changed) => { if (changed.has('step')) window.stepsShown.push(s.step); });
}"""
# The page's own moves: its keys, and the store's actions called as a view would call them.
OWN_MOVES = """async () => {
    const { store } = (await import(document.querySelector('script[type=module]').src)).scope;
    store.setStep(0);
    store.stepBy(1);
    store.toEnd();
    store.togglePlay();
    store.jumpTo('forward');
    return { step: store.state.step, playing: store.state.playing, shown: window.stepsShown };
}"""


def test_a_following_student_never_leaves_the_teachers_step(role_page):
    """The store's step guard holds a following student's timeline: a move of its own (a key, an
    action) ends on the teacher's step, or before an open question's answer, and no other frame
    is ever shown (when the follower put the page back after it moved, End showed the last frame
    and then 3 again)."""
    teacher = role_page("teacher")
    code = start_class(teacher)
    teacher.click("[data-testid=class-join-close]")
    student = role_page("student0")
    student.goto(f"/c/{code}")
    wait_state(student, "following")
    student.wait_for_selector(READY)
    for _ in range(3):
        teacher.click("[data-testid=step-forward]")
    wait_step(student, 3)
    student.evaluate(RECORD_STEPS)
    for key in ("End", "ArrowRight", "Home", "ArrowLeft", " "):
        student.keyboard.press(key)
    moved = student.evaluate(OWN_MOVES)
    assert moved == {"step": 3, "playing": False, "shown": [3]}

    # A question open: the teacher goes to the end, the student stops before a's gradient.
    teacher.select_option("[data-testid=class-ask-what]", "grad:n0:null")
    teacher.click("[data-testid=class-ask]")
    student.wait_for_selector("[data-testid=class-question][data-open=true]")
    teacher.click("#to-end")
    student.wait_for_function("() => Number(document.body.dataset.stepIndex) > 3")
    hold = step_of(student)
    assert hold < step_of(teacher)
    student.evaluate(RECORD_STEPS)
    student.keyboard.press("End")
    moved = student.evaluate(OWN_MOVES)
    assert moved == {"step": hold, "playing": False, "shown": [hold]}
    assert student.get_attribute("[data-testid=node][data-node-id=n0]", "data-grad") == ""
    for page in (teacher, student):
        assert page.errors == [], page.errors


def test_a_student_cannot_drive_the_class(classroom, live_server):
    teacher, students = classroom["teacher"], classroom["students"]
    code = classroom["code"]
    refused = students[0].evaluate(
        """async (code) => {
            const url = new URL(`/api/class/${code}/live`, location.href);
            url.protocol = 'ws:';
            const replies = [];
            const socket = new WebSocket(url);
            await new Promise((done) => socket.addEventListener('open', done));
            socket.send(JSON.stringify({type: 'hello', role: 'student'}));
            socket.send(JSON.stringify({type: 'mode', mode: 'free'}));
            socket.send(JSON.stringify({type: 'view', view: {source: 'x = 1', step: 0}}));
            await new Promise((done) => socket.addEventListener('message', (event) => {
                const message = JSON.parse(event.data);
                if (message.type === 'error') replies.push(message.error);
                if (replies.length === 2) done();
            }));
            const impostor = new WebSocket(url);
            await new Promise((done) => impostor.addEventListener('open', done));
            impostor.send(JSON.stringify({type: 'hello', role: 'teacher', token: 'not-the-token'}));
            const closed = await new Promise((done) => impostor.addEventListener('close', (e) => done(e.code)));
            socket.close();
            return {replies, closed};
        }""",
        code,
    )
    assert (
        refused["replies"]
        == [{"type": "NotTeacher", "message": "Only the teacher can move the class."}] * 2
    )
    assert refused["closed"] == 4403
    for student in students:
        assert state_of(student) == "following"
        assert step_of(student) == step_of(teacher)
        assert (
            student.locator("[data-testid=node][data-node-id=n0]").get_attribute("data-label")
            == "a"
        )
    # The join link carries no token; the teacher's page keeps it in its own tab only.
    token = teacher.evaluate("JSON.parse(sessionStorage.getItem('chainrule.class.teacher')).token")
    assert token and token not in teacher.locator("[data-testid=class-url]").inner_text()
    assert students[0].evaluate("sessionStorage.getItem('chainrule.class.teacher')") is None


def test_an_unknown_code_says_so_and_asks_for_another(page):
    page.goto("/c/ZZZ-ZZZ")
    page.wait_for_selector("[data-testid=class-status][data-state=unknown]")
    assert (
        "There is no class with the code ZZZ-ZZZ"
        in page.locator("[data-testid=class-status]").inner_text()
    )
    assert page.locator("[data-testid=class-join-code]").is_visible()
    page.wait_for_selector(READY)  # the page is the visitor's: a preset, not an empty pane


def test_the_teacher_page_with_the_code_and_qr(role_page, live_server, screenshots_dir):
    teacher = role_page("teacher")
    code = start_class(teacher)
    qr = teacher.locator("[data-testid=class-qr] svg")
    assert int(qr.get_attribute("data-modules")) >= 21  # a version-1 code or larger
    box = qr.bounding_box()
    assert box["width"] >= 200  # readable from the back row when projected
    shot = screenshots_dir / "live-class-teacher-code.png"
    teacher.screenshot(path=str(shot))
    # An independent reader (zbar, make test-deps installs it) decodes the code on the screen.
    decoded = subprocess.run(
        ["zbarimg", "--quiet", "--raw", str(shot)], capture_output=True, text=True
    )
    url = teacher.locator("[data-testid=class-url]").inner_text()
    assert decoded.stdout.strip() == url == f"{live_server}/c/{code}"
    teacher.click("[data-testid=class-join-close]")
    teacher.click("[data-testid=class-end]")
    teacher.wait_for_selector("[data-testid=class-start]")
    assert teacher.errors == []


def roster_names(teacher) -> list[str]:
    return teacher.locator(
        "[data-testid=class-roster-student] .class-roster-name"
    ).all_inner_texts()


def test_the_teacher_sees_the_room_removes_a_student_and_locks_joining(
    classroom, browser, live_server, screenshots_dir
):
    """Who is connected, Remove, Lock joining (issue 37: the teacher could not remove anyone).
    A removed student's page is told and is theirs again; the same tab stays out after a
    reload. Locked, a newcomer is told so while a student who joined comes back."""
    teacher, students = classroom["teacher"], classroom["students"]
    ann = students[0]
    ann.fill("[data-testid=class-name]", "Ann")
    ann.press("[data-testid=class-name]", "Enter")
    ann.locator("[data-testid=class-name]").blur()
    teacher.click("[data-testid=class-students]")
    dialog = teacher.locator("#class-roster-dialog")
    dialog.wait_for()
    teacher.wait_for_function(
        "() => [...document.querySelectorAll('.class-roster-name')].some(n => n.textContent === 'Ann')"
    )
    names = roster_names(teacher)
    assert names[0] == "Ann" and len(names) == 3
    assert all(n.startswith("no nickname · ") for n in names[1:])
    teacher.screenshot(path=str(screenshots_dir / "class-roster-1280x720.png"))

    teacher.check("[data-testid=class-lock]")
    teacher.wait_for_function(
        "() => document.querySelector('[data-testid=class-students]').textContent"
        ".endsWith('· locked')"
    )
    late = new_page(browser, live_server, 390, 844)
    late.goto(f"/c/{classroom['code']}")
    wait_state(late, "locked")
    late.wait_for_selector(READY)  # refused, the page opens on a preset, not an empty pane
    assert late.locator("[data-testid=class-status]").inner_text() == (
        "This class is not taking new students: the teacher has locked joining."
    )
    phone = students[1]  # joined before the lock: a reload comes back
    phone.reload()
    wait_state(phone, "following")
    # The reload's leave and join reach the teacher in turn: wait for the room whole again,
    # or the count after Remove could be read from the moment the phone was away.
    teacher.wait_for_selector("[data-testid=class-students][data-count='3']")
    teacher.wait_for_function(
        "() => document.querySelectorAll('[data-testid=class-roster-student]').length === 3"
    )

    teacher.locator("[data-testid=class-roster-student]", has_text="Ann").locator(
        "[data-testid=class-remove]"
    ).click()
    wait_state(ann, "removed")
    assert ann.locator("[data-testid=class-status]").inner_text() == (
        "The teacher removed you from this class."
    )
    assert ann.evaluate("document.body.dataset.classState") == "removed"
    assert ann.locator("[data-testid=source]").is_visible()  # the page is theirs again
    teacher.wait_for_selector("[data-testid=class-students][data-count='2']")
    teacher.wait_for_function(
        "() => document.querySelectorAll('[data-testid=class-roster-student]').length === 2"
    )
    assert "Ann" not in roster_names(teacher)
    ann.reload()
    wait_state(ann, "removed")
    ann.wait_for_selector(READY)
    assert ann.locator("[data-testid=class-status]").inner_text() == (
        "The teacher removed you from this class."
    )
    ann.screenshot(path=str(screenshots_dir / "class-removed-1280x720.png"))

    teacher.uncheck("[data-testid=class-lock]")
    teacher.wait_for_function(
        "() => !document.querySelector('[data-testid=class-students]').textContent"
        ".includes('locked')"
    )
    late.reload()
    wait_state(late, "following")
    teacher.wait_for_selector("[data-testid=class-students][data-count='3']")
    assert late.errors == []
    late.context.close()


@pytest.fixture
def two_servers(redis_url) -> Iterator[tuple[str, str]]:
    """Two server processes sharing one Redis (a replica each, on its own port)."""
    env = {"CHAINRULE_REDIS_URL": redis_url}
    first, first_url = start_server(env)
    try:
        second, second_url = start_server(env)
    except Exception:
        stop_server(first)
        raise
    yield first_url, second_url
    stop_server(first)
    stop_server(second)


def test_two_processes_share_a_class_through_redis(browser, two_servers):
    teacher_url, student_url = two_servers
    teacher = new_page(browser, teacher_url)
    code = start_class(teacher, "square")
    teacher.click("[data-testid=class-join-close]")
    students = [new_page(browser, student_url) for _ in range(3)]
    for student in students:
        student.goto(f"/c/{code}")
        wait_state(student, "following")
    teacher.wait_for_selector("[data-testid=class-students][data-count='3']")
    for _ in range(4):
        teacher.click("[data-testid=step-forward]")
    for student in students:
        wait_step(student, 4)
    teacher.select_option("[data-testid=class-ask-what]", "grad:n0:null")
    teacher.click("[data-testid=class-ask]")
    for student, answer in zip(students, ["6", "3", "6"], strict=True):
        student.wait_for_selector("[data-testid=class-question][data-open=true]")
        student.fill("[data-testid=class-answer]", answer)
        student.click("[data-testid=class-answer-send]")
        student.wait_for_selector("[data-testid=class-answer-status][data-acked=true]")
    teacher.wait_for_selector("[data-testid=class-answers][data-count='3']")
    teacher.click("[data-testid=class-reveal]")
    board = teacher.locator("#class-board-dialog [data-testid=class-board]")
    board.wait_for()
    assert board.get_attribute("data-right") == "2"
    assert board.locator(".board-bar[data-diagnosis=overwrite]").get_attribute("data-count") == "1"
    for student, verdict in zip(students, ["right", "wrong", "right"], strict=True):
        student.wait_for_selector(f"[data-testid=class-verdict][data-verdict={verdict}]")
    for page in (teacher, *students):
        assert page.errors == [], page.errors
        page.context.close()


def test_end_class_ends_every_page_and_gives_it_back(classroom):
    """End class: every page says so within 2 s and the student's page is theirs again, on the
    last program shown (it was a close frame alone: the students stayed on "Following the
    teacher", locked)."""
    teacher, students = classroom["teacher"], classroom["students"]
    for _ in range(3):
        teacher.click("[data-testid=step-forward]")
    for student in students:
        wait_step(student, 3)
    teacher.click("[data-testid=class-end]")
    teacher.wait_for_selector("[data-testid=class-status][data-state=ended]", timeout=2_000)
    assert teacher.locator("[data-testid=class-status]").inner_text() == "The class has ended."
    assert teacher.locator("[data-testid=class-start]").is_visible()
    ended = {"en": "The class has ended.", "ru": "Урок закончился."}
    for student, language in zip(students, ["en", "ru", "en"], strict=True):
        student.wait_for_selector("[data-testid=class-status][data-state=ended]", timeout=2_000)
        assert student.locator("[data-testid=class-status]").inner_text() == ended[language]
        assert student.evaluate("document.body.dataset.classState") == "ended"
        assert student.locator("[data-testid=source]").is_visible()  # the page is theirs
        assert "d = b * c" in student.locator("[data-testid=source]").input_value()
    explorer = students[0]
    explorer.keyboard.press("Home")
    wait_step(explorer, 0)
    explorer.keyboard.press("End")
    explorer.wait_for_function("() => Number(document.body.dataset.stepIndex) > 3")


@pytest.fixture
def two_servers_on_own_redis(own_redis) -> Iterator[tuple[str, str, object]]:
    """Two server processes sharing a Redis of this test's own, persisted as compose.yaml
    persists it, that the test stops and starts again."""
    env = {"CHAINRULE_REDIS_URL": own_redis.url}
    first, first_url = start_server(env)
    try:
        second, second_url = start_server(env)
    except Exception:
        stop_server(first)
        raise
    yield first_url, second_url, own_redis
    stop_server(first)
    stop_server(second)


LOST = "Connection to the class lost: reconnecting…"


def test_redis_restarts_mid_question_and_every_page_says_so_and_comes_back(
    browser, two_servers_on_own_redis, screenshots_dir
):
    """Redis stops mid-question: every page says the connection to the class is lost within
    2 s; the teacher's moves meanwhile are delivered afterwards (the view) or refused visibly (a
    mode); Redis comes back with the class, its open question and its acknowledged answers, and
    every page follows again without a reload. It was: students frozen on "Following", the
    teacher's bar "open" with a stale count, moves lost, an answer told its question was closed."""
    teacher_url, student_url, store = two_servers_on_own_redis
    teacher = new_page(browser, teacher_url)
    code = start_class(teacher, "square")
    teacher.click("[data-testid=class-join-close]")
    sizes = [(1280, 720), (390, 844), (800, 600)]
    students = [new_page(browser, student_url, w, h) for w, h in sizes]
    for student in students:
        student.goto(f"/c/{code}")
        wait_state(student, "following")
    for _ in range(4):
        teacher.click("[data-testid=step-forward]")
    teacher.select_option("[data-testid=class-ask-what]", "grad:n0:null")
    teacher.click("[data-testid=class-ask]")
    for student, answer in zip(students, ["6", "3", "6"], strict=True):
        student.wait_for_selector("[data-testid=class-question][data-open=true]")
        student.fill("[data-testid=class-answer]", answer)
        student.click("[data-testid=class-answer-send]")
        student.wait_for_selector("[data-testid=class-answer-status][data-acked=true]")
    teacher.wait_for_selector("[data-testid=class-answers][data-count='3']")

    store.stop()
    lost = teacher.locator("[data-testid=class-connection]")
    lost.wait_for(state="visible", timeout=2_000)
    assert lost.inner_text() == LOST
    for student in students:
        student.wait_for_selector("[data-testid=class-status][data-state=offline]", timeout=2_000)
        assert student.locator("[data-testid=class-status]").inner_text() == LOST
    # Meanwhile: a mode is refused where the teacher sees it; the view waits and goes later.
    teacher.click("[data-testid=class-pause]")
    hold = teacher.locator("[data-testid=class-hold]")
    teacher.wait_for_function(
        "() => document.querySelector('[data-testid=class-hold]').textContent"
        ".includes('so this was not done')"
    )
    assert hold.is_visible()
    teacher.screenshot(path=str(screenshots_dir / "live-class-teacher-store-lost.png"))
    students[1].screenshot(path=str(screenshots_dir / "live-class-phone-store-lost.png"))
    teacher.click("#toggle-fold")

    store.start()
    lost.wait_for(state="hidden", timeout=5_000)
    for student in students:
        wait_state(student, "following")
        student.wait_for_function("() => document.querySelector('#toggle-fold').checked")
        assert student.locator("[data-testid=class-question]").get_attribute("data-open") == "true"
    teacher.click("[data-testid=class-reveal]")
    board = teacher.locator("#class-board-dialog [data-testid=class-board]")
    board.wait_for()
    assert board.get_attribute("data-total") == "3" and board.get_attribute("data-right") == "2"
    for student, verdict in zip(students, ["right", "wrong", "right"], strict=True):
        student.wait_for_selector(f"[data-testid=class-verdict][data-verdict={verdict}]")
    for page in (teacher, *students):
        assert page.errors == [], page.errors
        page.context.close()


def test_the_teacher_takes_the_class_back_from_another_browser(
    role_page, browser, live_server, screenshots_dir
):
    """The teacher link (its token after `#`, never in the join link or the QR code) opened in
    another browser makes that page the teacher; the old page says control moved and stops
    driving. It was: the token lived in the closed tab alone, and /c/<code> made a student."""
    teacher = role_page("teacher")
    code = start_class(teacher)
    token = teacher.evaluate("JSON.parse(sessionStorage.getItem('chainrule.class.teacher')).token")
    join_url = teacher.locator("[data-testid=class-url]").inner_text()
    teacher.click("[data-testid=class-join-close]")
    link = teacher.get_attribute("[data-testid=class-teacher-link]", "href")
    assert link == f"{live_server}/#teach={code.replace('-', '')}.{token}"
    assert token not in join_url
    student = role_page("student0")
    student.goto(f"/c/{code}")
    wait_state(student, "following")
    elsewhere = new_page(browser, live_server)  # another browser: nothing of the old tab's
    elsewhere.goto(link)
    elsewhere.wait_for_selector("[data-testid=class-show-code]")
    assert elsewhere.evaluate("location.hash") == ""  # the token leaves the address bar
    assert elsewhere.locator("[data-testid=class-show-code]").inner_text() == code
    teacher.wait_for_selector("[data-testid=class-status][data-state=moved]")
    assert (
        teacher.locator("[data-testid=class-status]").inner_text()
        == "Control of the class moved to another page."
    )
    assert teacher.locator("[data-testid=class-bar]").count() == 0
    teacher.screenshot(path=str(screenshots_dir / "live-class-control-moved.png"))
    elsewhere.wait_for_selector(READY)
    # It opens on the class's program and step, not its own default, and sends nothing first.
    elsewhere.wait_for_function("() => document.querySelector('[data-testid=source]').value"
                                ".includes('d = b * c')")  # fmt: skip
    assert student.locator("[data-testid=source]").input_value().endswith("d = b * c")
    elsewhere.screenshot(path=str(screenshots_dir / "live-class-teacher-link.png"))
    for _ in range(2):
        elsewhere.click("[data-testid=step-forward]")
    wait_step(student, 2)
    assert student.locator("[data-testid=source]").input_value().endswith("d = b * c")
    student.evaluate(RECORD_STEPS)
    teacher.click("#to-end")  # the old page moves alone now: nothing of it reaches the class
    teacher.wait_for_function("() => Number(document.body.dataset.stepIndex) > 3")
    elsewhere.click("[data-testid=step-forward]")
    wait_step(student, 3)
    assert max(student.evaluate("window.stepsShown")) == 3  # never the old page's last step
    for page in (teacher, student, elsewhere):
        assert page.errors == [], page.errors
    elsewhere.context.close()


def test_a_teacher_with_a_program_longer_than_a_students_message_keeps_the_class(role_page):
    """A program over 4 KB, a student's bound until the server has read the hello: the teacher's
    page sends its view after the welcome (it resent it as soon as a socket opened, back to back
    with the hello, where the server could still read it under a student's bound after a
    reconnection), and the class runs with it."""
    lines = [f"v{i} = {i % 7 - 3}" for i in range(600)]
    source = "\n".join([*lines, "L = v1 * v2 + v3"])
    assert len(source.encode()) > 4_096
    teacher = role_page("teacher")
    teacher.goto("/")
    teacher.wait_for_selector(READY)
    teacher.fill("[data-testid=source]", source)
    teacher.press("[data-testid=source]", "Control+Enter")
    teacher.wait_for_function("() => document.querySelector('[data-testid=node][data-label=L]')")
    teacher.click("[data-testid=class-start]")
    code = teacher.locator("[data-testid=class-code]").inner_text()
    teacher.click("[data-testid=class-join-close]")
    student = role_page("student0")
    student.goto(f"/c/{code}")
    wait_state(student, "following")
    for _ in range(3):
        teacher.click("[data-testid=step-forward]")
    wait_step(student, 3)
    assert teacher.get_attribute("[data-testid=class-bar]", "data-connection") == "open"
    assert "v599 = " in student.locator("[data-testid=source]").input_value()
    assert teacher.errors == [] and student.errors == []


CARDS_JS = """() => Object.fromEntries([...document.querySelectorAll('[data-testid=node]')]
  .map((g) => [g.dataset.nodeId, [g.dataset.data, g.dataset.grad]]))"""


def cards_of(page) -> dict[str, list[float | None]]:
    """Each card's data and grad (data-* attributes: JavaScript's full-precision text; None for
    a number the card does not show, a constant's gradient)."""
    shown = page.evaluate(CARDS_JS).items()
    return {node: [float(x) if x else None for x in pair] for node, pair in shown}


def engine_cards(source: str, values: dict[str, float]) -> tuple[dict[str, list[float]], float]:
    """Each node's data and grad by the engine, and the root's data."""
    trace = engine.trace(source, values)
    cards = {
        f"n{node.id}": [node.data, None if node.kind == "const" else trace.grads[node.id]]
        for node in trace.nodes
    }
    return cards, cards[trace.to_dict()["root"]][0]


def wait_root(page, data: float) -> None:
    page.wait_for_function(
        f"() => Number(document.querySelector('[data-testid=node].root').dataset.data) === {data!r}"
    )


def numbers_requests(page) -> list[str]:
    """The page's requests for a trace or its numbers, as they are made."""
    made: list[str] = []
    page.on("request", lambda r: made.append(r.url) if "/api/values" in r.url else None)
    page.on("request", lambda r: made.append(r.url) if "/api/graph" in r.url else None)
    return made


def test_a_teachers_drag_costs_the_server_nothing_per_following_student(role_page):
    """Issue 37: every following page sent its own POST /api/values for each move of the
    teacher's slider (39 for one drag). Now it paints the teacher's values from its own numbers
    (the teacher's page has the server confirm the same ones): no request at all, the numbers
    the engine's to the last digit."""
    teacher = role_page("teacher")
    code = start_class(teacher)
    student = role_page("student1", 390, 844)
    student.goto(f"/c/{code}")
    wait_state(student, "following")
    student.wait_for_selector(READY)
    teacher.click("[data-testid=class-join-close]")
    teacher.click("#to-end")  # every gradient shown
    wait_step(student, step_of(teacher))
    asked = numbers_requests(student)
    teacher.locator("[data-testid=slider-a] input.slider-range").focus()
    for _ in range(12):
        teacher.keyboard.press("ArrowRight")
    a = float(teacher.input_value("[data-testid=slider-a] input.slider-value"))
    expected, root = engine_cards(DIAMOND, {"a": a})
    wait_root(student, root)
    assert cards_of(student) == expected
    assert student.evaluate("document.body.dataset.numbers") == "page"
    assert asked == []
    assert student.errors == [] and teacher.errors == []


OWN_FUNCTION = "sq(x) = x * x\na = 2\nb = sq(a) + a"


def test_a_program_the_page_cannot_compute_is_asked_once_a_drag_pauses(role_page, live_server):
    """A program's own function (`sq(x) = x * x`) is an op the page's evaluator does not know: a following
    page asks the server for its numbers once the teacher's moves pause, not for each move."""
    last = len(engine.trace(OWN_FUNCTION).to_dict()["steps"]["phase"]) - 1  # every number shown
    view = {"source": OWN_FUNCTION, "step": last}
    created = httpx.post(f"{live_server}/api/class", json={"view": view}, timeout=10).json()
    student = role_page("student2")
    url = live_server.replace("http://", "ws://") + f"/api/class/{created['code']}/live"
    with connect(url) as teacher:
        teacher.send(json.dumps({"type": "hello", "role": "teacher", "token": created["token"]}))
        assert json.loads(teacher.recv(timeout=5))["type"] == "welcome"
        student.goto(created["join_path"])
        wait_state(student, "following")
        student.wait_for_selector(READY)
        asked = numbers_requests(student)
        for k in range(1, 13):  # a drag: a move every 30 ms
            moved = {**view, "values": {"a": 2 + k / 4}}
            teacher.send(json.dumps({"type": "view", "view": moved}))
            time.sleep(0.03)  # the drag's pace (moves apart, as a hand's), not a wait for a state
        expected, root = engine_cards(OWN_FUNCTION, {"a": 5.0})
        wait_root(student, root)
        assert cards_of(student) == expected
        assert student.evaluate("document.body.dataset.numbers") == "server"
        # One ask for the drag (a second only if this machine stalled the page past the pause).
        assert 1 <= len(asked) <= 2, asked
        assert all("/api/values" in url for url in asked)
    assert student.errors == []
