from tinytext import wrap_words

for line in wrap_words("a demo of the wrapper " * 5, 20):
    print(line)
