"""Your own models page: upload a zip, open a folder of the models folder, the session's own models;
and the one-line problems a refused model gets (codes of model.store.problems.ENGLISH)."""

from model.store.problems import ENGLISH as _PROBLEMS_EN

EN = {
    "page.mymodels.title": "Your own models",
    "mymodels.intro": "Open a checkpoint of your own and look at its attention on every page that fits it. "
    "Two formats are read: **this project's checkpoint folder** (`config.json` with a `model` section, "
    "`model.safetensors`, `tokenizer.json`: what `python -m model train` writes) and a **Hugging Face "
    "BERT-style folder** (`config.json` with `model_type` `bert`, `model.safetensors`, `tokenizer.json`), "
    "converted into this project's own network. Weights are read from **safetensors only**: `.bin` and `.pt` "
    "files are pickles, which can run code when they are loaded, so they are never opened, and the message "
    "says how to convert them. On the command line: `python -m model translate --model-dir PATH`.",
    "mymodels.limits": "Limits: a zip of at most {zip_mb} MB that unpacks to at most {unpacked_mb} MB in at "
    "most {entries} entries; {models} models of your own per session, {session_mb} MB of uploads together. "
    "Uploaded models stay in a temporary folder of this session only and are deleted when the session ends "
    "(the tab is closed or the connection drops); other visitors never see them.",
    "mymodels.checking": "Checking and loading the model …",
    "mymodels.loaded": "**{label}** is loaded as `{name}` and selected in the sidebar: the other pages now "
    "show it.",
    "mymodels.refused": "Not loaded. {problem}",
    "mymodels.upload.header": "1 · Upload a zip or a .gguf file",
    "mymodels.upload.text": "Zip the model's folder: its files at the top of the zip or in one folder inside "
    "it. Entries that point outside the folder (an absolute path or `..`), symbolic links, encrypted entries "
    "and archives over the limits are refused before anything is written; only `.json`, `.safetensors` "
    "and `.txt` files are taken. A GGUF model can also come as its one `.gguf` file.",
    "mymodels.upload.label": "Model folder as a .zip, or a .gguf file",
    "mymodels.upload.help": "A .zip or a .gguf file of at most {zip_mb} MB.",
    "mymodels.folder.header": "2 · Open a folder from the models folder",
    "mymodels.folder.text": "The server reads model folders from one place only: `{root}`. Each folder directly "
    "inside it is offered here (set `ATTENTION_LENS_USER_MODELS` to use another place). A folder is read "
    "where it is; nothing is copied.",
    "mymodels.folder.missing": "The models folder `{root}` does not exist. Create it and put model folders "
    "inside, or start the app with `ATTENTION_LENS_USER_MODELS` set to another folder.",
    "mymodels.folder.empty": "The models folder `{root}` holds no model folder yet.",
    "mymodels.folder.pick": "Model folder",
    "mymodels.folder.open": "Open",
    "mymodels.list.header": "3 · Your models in this session",
    "mymodels.list.none": "None yet: upload a zip or open a folder.",
    "mymodels.list.row": "**{label}** · `{name}` · {fmt} · {size}",
    "mymodels.fmt.own": "this project's checkpoint",
    "mymodels.fmt.bert": "BERT-style folder, converted",
    "mymodels.fmt.hf_decoder": "GPT-2 / Llama / Qwen2 folder, converted",
    "mymodels.fmt.gguf": "GGUF file (Llama / Qwen2), converted",
    "mymodels.fmt.marian": "Marian (opus-mt) translation folder, converted",
    "mymodels.fmt.bart": "BART / mBART folder, converted",
    "mymodels.fmt.t5": "T5 / Flan-T5 folder, converted",
    "mymodels.size.upload": "{mb} MB uploaded",
    "mymodels.size.folder": "read in place",
    "mymodels.use": "Use",
    "mymodels.in_use": "in use",
    "mymodels.remove": "Remove",
    # the problems of model.store.problems.ENGLISH (file and entry names stay as they are)
    **{f"mymodels.problem.{code}": text for code, text in _PROBLEMS_EN.items()},
}

ZH = {
    "page.mymodels.title": "你自己的模型",
    "mymodels.intro": "打开你自己的检查点，在所有适用的页面上查看它的注意力。可以读取两种格式：**本项目的检查点文件夹**"
    "（`config.json` 里有 `model` 部分，加上 `model.safetensors` 和 `tokenizer.json`，也就是 "
    "`python -m model train` 写出的内容），以及**抱抱脸（Hugging Face）的 BERT 式文件夹**（`config.json` 里 "
    "`model_type` 为 `bert`，加上 `model.safetensors` 和 `tokenizer.json`），它会被转换成本项目自己的网络。"
    "权重**只从 `safetensors` 文件读取**：`.bin` 和 `.pt` 文件是 `pickle` 文件，加载时可能执行任意代码，所以从不打开它们，"
    "提示信息会说明如何转换。命令行用法：`python -m model translate --model-dir PATH`。",
    "mymodels.limits": "限制：zip 文件最大 {zip_mb} MB，解压后最多 {unpacked_mb} MB、最多 {entries} 个条目；"
    "每个会话最多 {models} 个你自己的模型，上传内容合计最多 {session_mb} MB。上传的模型只保存在本会话的临时文件夹里，"
    "会话结束（关闭标签页或连接断开）时删除；其他访问者永远看不到它们。",
    "mymodels.checking": "正在检查并加载模型 …",
    "mymodels.loaded": "**{label}** 已加载为 `{name}`，并已在侧边栏中选中：其他页面现在显示的就是它。",
    "mymodels.refused": "没有加载。{problem}",
    "mymodels.upload.header": "1 · 上传 zip 或 .gguf 文件",
    "mymodels.upload.text": "把模型文件夹压缩成 zip：文件放在 zip 的顶层，或放在其中唯一的一个文件夹里。指向文件夹之外的条目"
    "（绝对路径或 `..`）、符号链接、加密条目以及超出限制的压缩包，都会在写入任何内容之前被拒绝；只取 `.json`、"
    "`.safetensors` 和 `.txt` 文件。GGUF 模型也可以直接上传它的单个 `.gguf` 文件。",
    "mymodels.upload.label": "模型文件夹（.zip），或 .gguf 文件",
    "mymodels.upload.help": ".zip 或 .gguf 文件，最大 {zip_mb} MB。",
    "mymodels.folder.header": "2 · 从模型文件夹中打开",
    "mymodels.folder.text": "服务器只从一个地方读取模型文件夹：`{root}`。这里列出它里面的每个文件夹（设置 "
    "`ATTENTION_LENS_USER_MODELS` 可以换一个地方）。文件夹在原处读取，不会复制。",
    "mymodels.folder.missing": "模型文件夹 `{root}` 不存在。请创建它并把模型文件夹放进去，或者在启动应用时把 "
    "`ATTENTION_LENS_USER_MODELS` 设为另一个文件夹。",
    "mymodels.folder.empty": "模型文件夹 `{root}` 里还没有模型文件夹。",
    "mymodels.folder.pick": "模型文件夹",
    "mymodels.folder.open": "打开",
    "mymodels.list.header": "3 · 本会话中你自己的模型",
    "mymodels.list.none": "还没有：上传一个 zip 文件，或打开一个文件夹。",
    "mymodels.list.row": "**{label}** · `{name}` · {fmt} · {size}",
    "mymodels.fmt.own": "本项目的检查点",
    "mymodels.fmt.bert": "BERT 式文件夹（已转换）",
    "mymodels.fmt.hf_decoder": "GPT-2 / Llama / Qwen2 文件夹（已转换）",
    "mymodels.fmt.gguf": "GGUF 文件（Llama / Qwen2，已转换）",
    "mymodels.fmt.marian": "`Marian`（`opus-mt`）翻译模型文件夹（已转换）",
    "mymodels.fmt.bart": "`BART` / `mBART` 文件夹（已转换）",
    "mymodels.fmt.t5": "`T5` / `Flan-T5` 文件夹（已转换）",
    "mymodels.size.upload": "已上传 {mb} MB",
    "mymodels.size.folder": "在原处读取",
    "mymodels.use": "使用",
    "mymodels.in_use": "正在使用",
    "mymodels.remove": "移除",
    # the problems of model.store.problems.ENGLISH (file and entry names stay as they are)
    "mymodels.problem.not_found": "{file}：没有这个文件或文件夹。",
    "mymodels.problem.not_a_folder": "{file} 不是文件夹：请给出包含 config.json、model.safetensors 和 "
    "tokenizer.json 的文件夹（或它的 .zip 压缩包）。",
    "mymodels.problem.outside_root": "{file} 不在模型文件夹 {root} 里；只能打开这个文件夹里面的文件夹。",
    "mymodels.problem.outside_cache": "{file} 链接到它的模型缓存文件夹 {root} 之外；没有打开这个快照"
    "（缓存里的文件只链接到自己的 `blobs/`）。",
    "mymodels.problem.missing_file": "缺少 {file}：一个模型文件夹需要 config.json、model.safetensors 和 "
    "tokenizer.json（`Marian` 文件夹则需要源语言和目标语言的分词模型 `source.spm`、`target.spm` 以及 `vocab.json`）。",
    "mymodels.problem.pickle": "{file} 是 `pickle` 文件，加载时可能执行任意代码，所以没有打开它：本应用只读取 `safetensors` 文件。"
    "请在你信任它的环境里转换：`python -c \"import torch; from safetensors.torch import save_file; "
    "save_file({{k: v.contiguous() for k, v in torch.load('{name}', weights_only=True).items()}}, "
    "'model.safetensors')\"`（抱抱脸（Hugging Face）的模型也可以用 "
    "`save_pretrained(folder, safe_serialization=True)`）。",
    "mymodels.problem.sharded": "{file}：不支持分成多个文件的权重；请把它们保存成一个 model.safetensors。",
    "mymodels.problem.unknown_format": "{file} 既不是本应用的检查点配置（没有 `\"model\"` 部分），"
    "也不是抱抱脸（Hugging Face）的配置（没有 `\"model_type\"`）。",
    "mymodels.problem.unknown_architecture": "{file}：未知的架构 {arch!r}；本应用只能读取它自己的检查点、BERT 式"
    "编码器（`model_type` 为 `\"bert\"`、`\"roberta\"`、`\"xlm-roberta\"` 或 `\"distilbert\"`）、只含解码器的语言模型（`model_type` 为 `\"gpt2\"`、`\"llama\"`、"
    "`\"qwen2\"`、`\"mistral\"`、`\"qwen3\"`、`\"olmo2\"`、`\"gpt_neox\"`、`\"gemma3_text\"` 或 `\"phi3\"`）、翻译模型（`model_type` 为 `\"marian\"`、`\"bart\"` 或 `\"mbart\"`），以及 Llama、Qwen2、Qwen3、`Gemma 3` 或 `Phi-3` 模型的 .gguf 文件。",
    "mymodels.problem.several_gguf": "{file} 里有 {count} 个 .gguf 文件；请给出要打开的那一个（一个文件夹里只能有一个）。",
    "mymodels.problem.checkpoint": "无法加载：{detail}",
    "mymodels.problem.zip_too_big": "{file} 有 {size_mb} MB；上传的文件最大 {limit_mb} MB。",
    "mymodels.problem.zip_invalid": "{file} 不是可以读取的 zip 文件（{detail}）。",
    "mymodels.problem.zip_too_many": "{file} 里有 {count} 个条目；最多接受 {limit} 个。",
    "mymodels.problem.zip_unsafe_path": "{file}：条目 {entry!r} 指向模型文件夹之外（绝对路径或 `..`）；"
    "没有解压任何文件。",
    "mymodels.problem.zip_symlink": "{file}：条目 {entry!r} 是符号链接；没有解压任何文件。",
    "mymodels.problem.zip_special": "{file}：条目 {entry!r} 不是普通文件；没有解压任何文件。",
    "mymodels.problem.zip_encrypted": "{file}：条目 {entry!r} 是加密的；没有解压任何文件。",
    "mymodels.problem.zip_duplicate": "{file}：条目 {entry!r} 出现了两次；没有解压任何文件。",
    "mymodels.problem.zip_bomb": "{file} 解压后会有 {size_mb} MB；最多接受 {limit_mb} MB。",
    "mymodels.problem.zip_overrun": "{file}：条目 {entry!r} 解压出的字节比它的文件头声明的多；已停止解压并删除全部内容。",
    "mymodels.problem.zip_corrupt_entry": "{file}：条目 {entry!r} 已损坏（{detail}）；已删除全部内容。",
    "mymodels.problem.zip_no_config": "{file} 的顶层（或其中唯一的顶层文件夹）里没有 config.json（也没有 .gguf 文件）。",
    "mymodels.problem.space_models": "本会话已经有 {count} 个你自己的模型，这是上限；请先移除一个。",
    "mymodels.problem.space_bytes": "这个模型解压后有 {size_mb} MB，但本会话的 {limit_mb} MB 空间只剩 {left_mb} MB。",
    "mymodels.problem.server_bytes": "服务器上已有 {used_mb} MB 的上传模型（上限 {limit_mb} MB）；请稍后再试，"
    "或先移除你自己的一个模型。",
}
