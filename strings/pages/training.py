"""Training scrubber: one model's weights saved during training, shown step by step."""

EN = {
    "page.training.title": "Training, step by step",
    "training.title": "Training, step by step",
    "training.intro": "A model does not start out knowing where to look. This is the reverse model (it writes "
    "a word backwards) **as it was during its own training**: its weights were saved {n} times, evenly "
    "spaced from the random start (step 0) to the end (step {last}). Move the slider and the page runs the "
    "weights of that step, for real, on your word.",
    "training.missing": "The snapshot model `{name}` is not in `assets/models/` yet. Train it (about a "
    "minute) with `python -m model train --preset {name} --ship --force`, then reload this page.",
    "training.no_snapshots": "`{name}` has no weight snapshots, only its final weights. Retrain it with "
    "`python -m model train --preset {name} --ship --force` to save them.",
    "training.slider": "Training step",
    "training.slider_help": "Only the saved steps can be shown: the weights in between were never kept.",
    "training.step_option": "step {step}",
    "training.metric.step": "Training step",
    "training.metric.loss": "Training loss at this step",
    "training.metric.loss_none": "before training",
    "training.metric.loss_help": "The loss of this optimiser step's batch (label smoothing included), "
    "from the model's own training log.",
    "training.metric.em": "Test exact match",
    "training.metric.em_help": "Share of the 500 test words these weights reverse without a single wrong "
    "letter (measured when the model was shipped, on the stored float16 weights).",
    "training.metric.em_none": "not measured",
    "training.writes": "With these weights the model writes {output} for {word} (the right answer is "
    "{answer}).",
    "training.timeline_caption": "Top: the training loss of every optimiser step; bottom: the test exact match "
    "of every saved step. The red line is the step you picked.",
    "training.word": "The word: {word}. Cross-attention, layer {layer}, head {head} (the sidebar's layer and "
    "head):",
    "training.word_default": "(The sidebar's model is not a letter model, or the sidebar's text is not a "
    "word this model can read, so the page uses a fixed word.)",
    "training.clamped": "This model has {layers} decoder layers and {heads} heads: the sidebar's choice "
    "was brought into that range.",
    "training.map_title": "Step {step}: layer {layer}, head {head}",
    "training.map_caption": "Rows: the right answer, fed to the decoder one letter at a time (teacher "
    "forcing), so every step reads the same rows and only the weights change. The right cell of row t is "
    "source letter n − 1 − t: the anti-diagonal. Here this head puts {score} of each row's weight there on "
    "average (uniform attention over the {n_keys} source tokens would put {chance}).",
    "training.alignment_header": "When does the alignment appear?",
    "training.alignment_caption": "For every head of the cross-attention: the mean weight on the right "
    "source letter, on your word, at every saved step. The thick line is the chosen head; the dotted line is "
    "uniform attention.",
    "training.alignment_summary": "Measured on {word}: the head that ends highest is layer {layer}, head "
    "{head}: {first} at step {first_step}, {last} at step {last_step}. Its first step above half its final "
    "value is step {rise}.",
    "training.how": "How this was made: `python -m model train --preset {name} --ship --force` trains the "
    "reverse recipe (600 steps, the same data, seed and settings as the other reverse models) and saves the "
    "weights at {n} evenly spaced steps as float16 (`model/training/snapshots.py`); shipping evaluates each "
    "saved step on the test split.",
}

ZH = {
    "page.training.title": "训练过程回放",
    "training.title": "训练过程回放",
    "training.intro": "模型一开始并不知道该看哪里。这是单词倒序模型（把单词倒过来写）**在它自己训练过程中的样子**："
    "从随机初始化（第 0 步）到训练结束（第 {last} 步），它的权重被等间隔地保存了 {n} 次。拖动滑块，页面就会"
    "用那一步的权重真实地运行你输入的单词。",
    "training.missing": "快照模型 `{name}` 还不在 `assets/models/` 中。请用 "
    "`python -m model train --preset {name} --ship --force` 训练它（大约一分钟），然后重新加载本页。",
    "training.no_snapshots": "`{name}` 没有权重快照，只有最终权重。请用 "
    "`python -m model train --preset {name} --ship --force` 重新训练，以保存快照。",
    "training.slider": "训练步数",
    "training.slider_help": "只能显示保存过的步：中间各步的权重没有保留。",
    "training.step_option": "第 {step} 步",
    "training.metric.step": "训练步数",
    "training.metric.loss": "这一步的训练损失",
    "training.metric.loss_none": "训练之前",
    "training.metric.loss_help": "这一优化步所用批次的损失（含标签平滑），取自模型自己的训练记录。",
    "training.metric.em": "测试集完全匹配率",
    "training.metric.em_help": "这组权重能一个字母都不错地倒写出来的测试单词所占的比例（共 500 个；在发布模型时"
    "用保存的 `float16` 权重测得）。",
    "training.metric.em_none": "未测量",
    "training.writes": "用这组权重，模型对 {word} 写出 {output}（正确答案是 {answer}）。",
    "training.timeline_caption": "上图：每个优化步的训练损失；下图：每个保存步的测试集完全匹配率。红线是你选的那一步。",
    "training.word": "单词：{word}。交叉注意力，第 {layer} 层，第 {head} 个头（侧栏所选的层和头）：",
    "training.word_default": "（侧栏的模型不是字母模型，或者侧栏的文本不是这个模型能读的单词，所以本页使用一个固定的单词。）",
    "training.clamped": "这个模型的解码器有 {layers} 层、每层 {heads} 个头：侧栏的选择已被限制在这个范围内。",
    "training.map_title": "第 {step} 步：第 {layer} 层，第 {head} 个头",
    "training.map_caption": "行：正确答案，一次一个字母地送进解码器（教师强制），所以每一步读的都是同样的行，"
    "变的只是权重。第 t 行的正确位置是第 n − 1 − t 个源字母：也就是反对角线。这个头平均把每行 {score} 的权重"
    "放在那里（在 {n_keys} 个源 token 上均匀分配注意力的话是 {chance}）。",
    "training.alignment_header": "对齐是什么时候出现的？",
    "training.alignment_caption": "交叉注意力的每个头：在你的单词上，每个保存步落在正确源字母上的平均权重。"
    "粗线是所选的头；虚线是均匀注意力。",
    "training.alignment_summary": "在 {word} 上测得：最终最高的是第 {layer} 层第 {head} 个头：第 {first_step} 步"
    "为 {first}，第 {last_step} 步为 {last}。它第一次超过最终值一半的是第 {rise} 步。",
    "training.how": "制作方法：`python -m model train --preset {name} --ship --force` 按单词倒序的配方训练"
    "（600 步，数据、随机种子和设置都与其他倒序模型相同），并在 {n} 个等间隔的步上以 `float16` 保存权重"
    "（`model/training/snapshots.py`）；发布时在测试集上评估每个保存步。",
}
