# skill: spatial-reasoning
# setting: games
# hint: In a bottom-to-top list each name sits directly on the one below it and directly under the one above it.
import random

class ShelfStackEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        pile = rng.sample(["math", "art", "history", "music", "science", "poetry"], 4)
        i = rng.randrange(1, 3)
        up = rng.random() < 0.5
        self.answer = pile[i + 1] if up else pile[i - 1]
        self.opts = sorted(pile)
        self.tries, self.done = 0, 0
        obs = (f"Four books are stacked. From bottom to top: {', '.join(pile)}.\n"
               f"Which book is directly {'above' if up else 'below'} the {pile[i]} book? "
               f"Options: {', '.join(self.opts)}.\n"
               f"Any book is directly {'above' if up else 'below'} the top.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 1.0, False, False, {"success": False}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if box:
            self.credit += box[0]
            self.state = "HAS_CREDIT"
            return {"credit": self.credit}
        self.done = False
        return {"vend": self.vend_end, "change": 1.0}
        self.done = self.tries >= MAX_TRIES
        tail = f" Out of tries; it was {self.answer}." if self.done else " Try again."
        return tail, 1.0, True, {
            "success": True
        }

def main():
    # class: VendingMachine
    # class: ShelfStackEnv
    # class: Game
    # class: Exe
    # class: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe: Exe
