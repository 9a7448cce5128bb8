class PickFruitEnv:
    def reset(self, seed=None):
        self.turn = 0
        return "Which fruit is yellow and spiky: apple, pineapple or kiwi? Answer \\boxed{fruit}.", {}

    def step(self, action):
        self.turn += 1
        if action.strip() == "\\boxed{pineapple}":
            return "Yes!", 1.0, True, False, {"success": True}
        return "No.", 0.0, self.turn >= 3, False, {"success": False}
