# skill: logical-deduction
# setting: games
# hint: Go through the hours one at a time and cross out every hour in which at least one person is busy; the hour that survives is the answer.
import random
import re


class MeetingSlotEnv:
    PEOPLE = ["Ada", "Alan", "Grace", "Linus", "Marie"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        people = rng.sample(self.PEOPLE, rng.randint(2, 4))
        free = rng.randint(9, 16)
        busy = {p: [] for p in people}
        for h in range(9, 17):
            if h == free:
                continue
            for p in people:
                if rng.random() < 0.3:
                    busy[p].append(h)
            busy[rng.choice(people)].append(h)
        lines = ""
        for p in people:
            hours = sorted(set(busy[p]))
            text = ", ".join(f"{h}:00-{h + 1}:00" for h in hours)
            lines += f"- {p} is busy {text or 'at no time'}.\n"
        self.answer = str(free)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A one-hour meeting must start on the hour between 9:00 and 16:00 and everyone must be free.\n"
            f"{lines}Which hour can the meeting start? Answer with the hour, like \\boxed{{10}}. "
            "You have 2 attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().split(":")[0] if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"Wrong: the meeting can start at {self.answer}:00.", 0.0, True, False, {"success": False}
        return "Wrong, try again.", 0.0, False, False, {"success": False}
