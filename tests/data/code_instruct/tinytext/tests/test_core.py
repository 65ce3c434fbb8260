from tinytext import slugify


def test_slugify_folds_accents():
    assert slugify("Crème Brûlée") == "creme-brulee"
