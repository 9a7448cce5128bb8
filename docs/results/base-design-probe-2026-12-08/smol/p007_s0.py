# skill: spatial-reasoning
# setting: games
# hint: In a bottom-to-top list each name sits directly on the one below it and directly under the one above it.
import random
import re

def get_random_action():
    actions = ['up.up.down.down.down.right.right.left.left.right.right.right.right']
    return actions[random.randint(0, len(actions))]

def get_random_action_by_index(index, max_index):
    return actions[index + max_index - 1]

def get_random_action_by_index_by_index(index, max_index):
    return actions[index + max_index - 1][max_index - 1:index + 1]

def get_random_action_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index_by_index_by_index_by_index_by_index(index, max_index)

def get_random_action_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index_by_index(index, max_index):
    return get_random_action_by_index
