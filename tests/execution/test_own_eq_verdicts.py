"""A class with its own ``__eq__`` is compared as the program's objects are in Python: by that ``__eq__``, and by
their data too (the red-team round's hidden-state finding, ``test_redteam_round.py`` 1b).

The judge compares program objects as data and runs no program code. A class whose ``__eq__`` reads state kept
outside the instance (a class-level table keyed by ``id(self)``) made data-equal objects equal to the judge while
Python told them apart. Now the sandbox sends each such object's identity (``h``) and what that ``__eq__`` says of
the pairs of the outermost such snapshots of a test (``_wire_own.OwnVerdicts``, asked as each probe is taken, under the
test's limits); the judge calls two of them equal only where the data are equal and the verdict says so, and a pair
without a verdict is an error, never a pass. Inside such a pair only the data are compared, as in Python the outer
``__eq__`` decides what else it compares (so a linked list of 2,000 nodes costs one verdict, not 2,000^2).
"""

from __future__ import annotations

from .conftest import sandbox_per_mode
from .test_redteam_round import HIDDEN_STATE, _agree, _only, _p

sb = sandbox_per_mode(workers=1, timeout_s=1.0, memory_mb=512)


# The red-team round's Point, whose state is a class-level table keyed by id(self), and other shapes of __eq__.
OWN_EQ_SHAPES = HIDDEN_STATE["keeps_its_state_outside_the_instance"] + _p('''
    class Exact:
        def __init__(self, x):
            self.x = x
        def __eq__(self, other):
            return type(other) is Exact and self.x == other.x
        __hash__ = None
    class Touchy:
        def __init__(self, x):
            self.x = x
        def __eq__(self, other):
            raise RuntimeError("no comparing")
    def right(a, b):
        return Point(1, 1)
    def wrong(a, b):
        return Point(7, 7)
    def exact(x):
        return Exact(x)
    def touchy(x):
        return Touchy(x)
''')


def test_control_the_programs_own_eq_decides_with_the_data_as_in_python(sb):
    """Where the state is outside the instance the program's own ``__eq__`` decides, with the data: a right answer
    passes and a wrong one fails, nested in lists as at the top of a value; an ``__eq__`` with data of its own
    passes as before; one that raises makes the test an error, never a pass."""
    tests = ["assert right(Point(0, 0), Point(2, 2)) == Point(1, 1)",
             "assert wrong(Point(0, 0), Point(2, 2)) == Point(1, 1)",
             "assert [wrong(Point(0, 0), Point(2, 2))] == [Point(1, 1)]",
             "assert [right(Point(0, 0), Point(2, 2))] == [Point(1, 1)]",
             "assert wrong(Point(0, 0), Point(2, 2)) != Point(1, 1)",
             "assert exact(3) == Exact(3)", "assert exact(3) != Exact(4)",
             "assert touchy(1) == Touchy(1)"]  # fmt: skip
    statuses, python = _agree(sb, OWN_EQ_SHAPES, tests)
    assert python == ["pass", "fail", "fail", "pass", "pass", "pass", "pass", "error"]
    assert _only(statuses) == _only(python)
    assert statuses[-1] == "error"


def test_objects_sent_with_their_identity_but_no_verdict_are_never_equal():
    """A report whose program objects carry their identity (their class defines ``__eq__``) but no verdict of it,
    as a program that rewrote its encoder could send: comparing two of them is an error, never a pass; with a
    verdict, the judge's answer is that verdict and the data together."""
    from evolvecoder_datasets.execution.judge import judge, plan_test

    plan = plan_test("assert f(1) == g(1)")
    point = b"h%x;o1:s5:Points1:xi1;"
    bare = b"E2:v1;" + point % 1 + b"v2;" + point % 2
    assert judge(plan, bare)[0] == "error"
    assert judge(plan, bare + b"=1:1,2,T;") == ("pass", "")
    assert judge(plan, bare + b"=1:1,2,F;")[0] == "fail"
    assert judge(plan, bare + b"=1:1,2,R;")[0] == "error"
    # different data: "not equal" needs that __eq__'s word too (one that says yes to anything would pass a != b)
    other = b"E2:v1;" + point % 1 + b"v2;" + (point % 2).replace(b"xi1;", b"xi2;")
    assert judge(plan, other + b"=1:1,2,F;")[0] == "fail"
    assert judge(plan, other)[0] == "error" and judge(plan, other + b"=1:1,2,T;")[0] == "error"
    assert judge(plan_test("assert f(1) != g(1)"), other + b"=1:1,2,T;")[0] == "error"


NESTED = _p('''
    class Node:
        def __init__(self, val, next=None):
            self.val, self.next = val, next
        def __eq__(self, other):
            a, b = self, other
            while a is not None and b is not None:
                if a.val != b.val:
                    return False
                a, b = a.next, b.next
            return a is None and b is None
    class Tree:
        def __init__(self, val, children=()):
            self.val, self.children = val, list(children)
        def __eq__(self, other):
            return self.val == other.val and self.children == other.children
    def chain(n):
        head = None
        for v in reversed(range(n)):
            head = Node(v, head)
        return head
    def bad_chain(n):
        head = chain(n)
        head.next.next.val = -1
        return head
    def tree(depth):
        return Tree(depth, [tree(depth - 1) for _ in range(2)]) if depth else Tree(0)
''')


def test_nested_objects_with_their_own_eq_cost_one_verdict_per_outermost_pair(sb):
    """Long chains and trees of such objects: a right one passes within the limit (the verdicts are asked of the
    heads only), a wrong one fails, and a tree's children, compared inside a list, need no verdict of their own."""
    tests = ["assert chain(2000) == chain(2000)", "assert bad_chain(50) == chain(50)",
             "assert bad_chain(50) != chain(50)", "assert tree(6) == tree(6)", "assert tree(3) != tree(4)",
             "assert [chain(3), tree(2)] == [chain(3), tree(2)]"]
    statuses, python = _agree(sb, NESTED, tests)
    assert python == ["pass", "fail", "pass", "pass", "pass", "pass"]
    assert statuses == python


MANY = _p('''
    import dataclasses
    @dataclasses.dataclass
    class P:
        x: object
        y: object
    def pts(n):
        return [P(i, {"a": i, "b": -i}) for i in range(n)]
    def floats(n):
        return [P(float(i), {"b": -i, "a": i}) for i in range(n)]
''')


def test_verdicts_are_asked_only_of_objects_whose_data_may_be_equal(sb):
    """The sandbox asks the program's ``__eq__`` only about objects the judge may find equal as data (one class and
    one data key: numbers by value, dicts and sets by their items), so 600 dataclass objects in one test are 300
    groups of two, not 180,000 pairs, and ``P(1, ...) == P(1.0, ...)`` with a dict built in another order gets its
    verdict and passes, as in Python."""
    tests = ["assert pts(300) == [P(i, {'a': i, 'b': -i}) for i in range(300)]",
             "assert pts(300) == floats(300)", "assert pts(3) != floats(4)", "assert pts(2)[1] != P(1, {'a': 2})"]
    statuses, python = _agree(sb, MANY, tests)
    assert python == ["pass", "pass", "pass", "pass"]
    assert statuses == python


STATEFUL = _p('''
    import dataclasses
    @dataclasses.dataclass
    class Counter:
        n: int = 0
        def bump(self):
            self.n += 1
            return self
    def make():
        return Counter()
''')


def test_a_verdict_reads_the_objects_as_the_probe_found_them(sb):
    """An object compared, then changed, then compared again (a stateful class under test, as in code_instruct's
    tasks): each comparison's verdict is asked when its probe is taken, so it reads the state Python's assert reads,
    and a right program passes; the same test against a program whose ``bump`` does nothing fails."""
    test = ("c = make()\nassert c == Counter(0)\nc.bump()\nassert c == Counter(1)\nc.bump()\n"
            "assert c == Counter(2) and c != Counter(1)")  # fmt: skip
    statuses, python = _agree(sb, STATEFUL, [test])
    assert python == ["pass"] and statuses == ["pass"]
    lazy = STATEFUL.replace("self.n += 1", "pass")
    statuses, python = _agree(sb, lazy, [test])
    assert python == ["fail"] and statuses == ["fail"]


TEST_CLASS = _p('''
    class Pkg:
        def __init__(self, name, version):
            self.name, self.version = name, version
        def __eq__(self, other):
            if other.__class__ is not self.__class__:
                return NotImplemented
            return (self.name, self.version) == (other.name, other.version)
        def __ne__(self, other):
            result = self.__eq__(other)
            return result if result is NotImplemented else not result
        __hash__ = None
''')
BUMP = "def bump_all(items):\n    return [type(i)(i.name, i.version + 1) for i in items]\n"


def test_the_tests_own_class_built_outside_the_sandbox_is_compared_as_data(sb):
    """The test defines the class (an attrs class in code_instruct's ``bump_all`` task) and builds the expected side
    where the program is not (the judge has the test's constructor evaluated by a clean process), while the program
    returns instances of it: the two objects are snapshots of two processes, so no verdict of its ``__eq__`` can
    span them, and the data decide (the class is the test's, which the program cannot change there). Before, that
    pair was an error and the right program of the task was rejected. A bump by two still fails."""
    tests = [TEST_CLASS + 'assert bump_all([Pkg("a", 1), Pkg("b", 7)]) == [Pkg("a", 2), Pkg("b", 8)]',
             TEST_CLASS + 'e = Pkg("a", 2)\nx = bump_all([Pkg("a", 1)])\nassert x[0] == e and not (x[0] != e)',
             TEST_CLASS + 'items = [Pkg("a", 1)]\nassert bump_all(items) != items']  # fmt: skip
    statuses, python = _agree(sb, BUMP, tests)
    assert python == ["pass"] * 3 and statuses == python
    statuses, python = _agree(sb, BUMP.replace("+ 1", "+ 2"), tests[:2])
    assert python == ["fail"] * 2 and statuses == python
