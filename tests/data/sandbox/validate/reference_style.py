"""SPADE self-play generated game"""

import random
import re
from typing import Any, Dict, Optional, Tuple


class HiddenSumEnv:
    """Reference-style game: class name ending in Env, reset(seed), \\boxed{} answers,
    max_turns given to the constructor, names such as Counter used without an import."""

    def __init__(self, max_turns: int = 5):
        self.max_turns = max_turns
        self.turn = 0
        self.target = 0

    def reset(self, seed) -> Tuple[str, Dict[str, Any]]:
        rng = random.Random(seed)
        self.a, self.b = rng.randint(10, 99), rng.randint(10, 99)
        self.target = self.a + self.b
        self.turn = 0
        tally = Counter(str(self.target))
        return (f"Add {self.a} and {self.b}. Reply with \\boxed{{answer}}. ({len(tally)} distinct digits)",
                {"turn": 0})

    def step(self, action: str) -> Tuple[str, float, bool, bool, Dict[str, Any]]:
        self.turn += 1
        m = re.search(r"\\boxed\{([^{}]+)\}", action)
        if m is None:
            return "Use \\boxed{...}.", 0.0, self.turn >= self.max_turns, False, {"turn": self.turn}
        if m.group(1).strip() == str(self.target):
            return "Correct!", 1.0, True, False, {"success": True}
        hint = "higher" if m.group(1).strip().lstrip("-").isdigit() and int(m.group(1)) < self.target else "lower"
        return f"No, go {hint}.", 0.0, self.turn >= self.max_turns, self.turn >= self.max_turns, {"turn": self.turn}
