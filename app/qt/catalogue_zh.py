"""The interface's Chinese: English text as the window shows it → 简体中文.

EXACT holds whole strings; PATTERNS the sentences built at run time (numbers, names, times),
tried in order. Proper names (Pagewise, llama.cpp, vLLM, model names), file names and what the
user or the model wrote are never here: they are shown as they are."""
from __future__ import annotations

import re

EXACT: dict[str, str] = {
    # menus and actions
    "File": "文件", "View": "视图", "Ask": "提问", "Help": "帮助", "Engine": "引擎",
    "Open a PDF in this pane": "在此窗格打开 PDF", "Show or hide the library while comparing": "对比时显示或隐藏文档库",
    "Side by side · Ctrl+O opens into the pane in bold": "并排 · Ctrl+O 在粗体标题的窗格中打开",
    "✕ Close side by side": "✕ 关闭并排", "Back to one document (the left one)": "回到单个文档（左侧）",
    "Clauses side by side": "条款并排对比", "✓ verified": "✓ 已核实", "⚠ not verified": "⚠ 未核实",
    "The model's summary is not shown: its citations do not back it.": "不显示模型的总结：其引文不支持它。",
    "Summary (model, backed by its citations)": "总结（模型生成，有引文支持）",
    "the table is from the search alone; no model is running": "此表仅来自搜索；没有运行模型",
    "Conversations": "对话", "New conversation": "新对话",
    "Start an empty conversation: the next question carries nothing of the others":
        "开始一个空白对话：下一个问题不带入其他对话的任何内容",
    "Conversations about the documents asked; pick one to see it again": "关于所问文档的对话；选择一个可再次查看",
    "Export conversation as Markdown…": "将对话导出为 Markdown…", "Export conversation as PDF memo…": "将对话导出为 PDF 备忘录…",
    "Open PDF…": "打开 PDF…", "Open PDF side by side…": "并排打开 PDF…", "Open recent": "最近打开",
    "Close side-by-side view": "关闭并排视图", "Quit": "退出", "(none yet)": "（暂无）",
    "Compare versions (left: old, right: new)": "比较版本（左：旧版，右：新版）",
    "Compare versions": "比较版本", "Old version": "旧版本", "New version": "新版本",
    "Open the old version on the left and the new one side by side on the right first.":
        "请先在左侧打开旧版本，并在右侧并排打开新版本。",
    "Zoom in": "放大", "Zoom out": "缩小", "Fit width": "适合宽度", "Fit page": "适合页面",
    "Find in document": "在文档中查找", "Question box": "提问框", "Stop answer": "停止回答",
    "Next citation": "下一条引文", "Previous citation": "上一条引文", "Keyboard shortcuts": "键盘快捷键",
    "Models…": "模型…", "Settings…": "设置…", "Copy answer with citations": "复制回答及引文",
    "Export answer as Markdown…": "将回答导出为 Markdown…", "Export answer as PDF memo…": "将回答导出为 PDF 备忘录…",
    "Open a PDF": "打开 PDF", "Open a second PDF side by side": "并排打开第二个 PDF",
    "Go to the question box": "转到提问框", "Stop the answer": "停止回答", "Next / previous citation": "下一条 / 上一条引文",
    "Search in the document": "在文档中搜索", "Zoom in / out (or Ctrl+wheel)": "放大 / 缩小（或 Ctrl+滚轮）",
    "Fit width / fit page": "适合宽度 / 适合页面",
    # the window
    "Answer": "回答", "Citations": "引文", "Citations appear here after an answer.": "回答后引文显示在这里。",
    "Ask about the document…  (Ctrl+Enter)": "就文档提问…  (Ctrl+Enter)", "Stop": "停止",
    "Stop generating (Esc)": "停止生成 (Esc)", "Asking:": "提问范围：",
    "Open a PDF to ask questions about it.": "打开 PDF 后即可就其提问。",
    "The engine is starting…": "引擎正在启动…", "Drop a PDF here or press Ctrl+O": "把 PDF 拖到这里，或按 Ctrl+O",
    "Drop the second PDF here or press Ctrl+Shift+O": "把第二个 PDF 拖到这里，或按 Ctrl+Shift+O",
    "No document": "没有文档", "Go to page": "转到页", "Zoom (Ctrl+wheel, Ctrl++ / Ctrl+-)": "缩放（Ctrl+滚轮，Ctrl++ / Ctrl+-）",
    "Search in document": "在文档中搜索", "Zoom out (Ctrl+-)": "缩小 (Ctrl+-)", "Zoom in (Ctrl++)": "放大 (Ctrl++)",
    "Previous hit (Shift+Enter)": "上一处 (Shift+Enter)", "Next hit (Enter)": "下一处 (Enter)", "Indexing": "正在建立索引",
    "Library": "文档库", "Filter by title, file or language": "按标题、文件或语言筛选", "Open": "打开",
    "Ask these": "就这些提问", "Ask the next questions about all the selected documents": "接下来的问题针对所有选中的文档",
    "Remove": "移除", "Forget the document, its questions and answers, and its cached state": "忘记该文档及其问答和缓存状态",
    "Remove from the library": "从文档库移除", "Title": "标题", "Pages": "页数", "Lang": "语言", "Added": "添加时间",
    "Ask your PDFs questions. Every answer cites its page, and nothing leaves this computer.":
        "向你的 PDF 提问。每个回答都注明页码，任何内容都不会离开这台电脑。",
    "Open a PDF…": "打开 PDF…", "Ctrl+O, or drop a PDF on the window": "Ctrl+O，或把 PDF 拖到窗口上",
    "Open the sample contract": "打开示例合同", "Recent documents": "最近的文档", "Documents you open appear here.": "你打开的文档会显示在这里。",
    "The library is empty: open a PDF to add it.": "文档库为空：打开一个 PDF 即可加入。", "Get a model…": "获取模型…",
    "This is a small test model (135M).": "这是一个小型测试模型（135M）。",
    "It is built in so Pagewise works straight away, but its answers are often wrong or cite the wrong page: real work needs a real model.":
        "内置它是为了让 Pagewise 开箱即用，但它的回答常常出错或引错页：正式工作需要真正的模型。",
    "Starting the answer engine…": "正在启动回答引擎…", "The answer engine is running.": "回答引擎正在运行。",
    "the engine starts when the app opens": "引擎随应用启动", "no NVIDIA GPU · CPU mode": "没有 NVIDIA GPU · CPU 模式",
    "Open a PDF and ask a question. Answers cite pages; click a citation to see the words in the document.":
        "打开 PDF 并提问。回答会注明页码；点击引文即可在文档中看到原文。",
    "Q:": "问：", "Sources:": "来源：", "EVIDENCE": "证据", "ANSWER": "回答", "answer cut off": "回答被截断",
    "NOT ADDRESSED": "未涉及", "NO ANSWER FOUND BY THE MODEL": "模型未找到答案",
    "The model found no answer in the cards below; the search found them on this question's topic: read them.":
        "模型在下面的卡片中没有找到答案；搜索认为它们与这个问题相关：请阅读它们。",
    "the model is reading…": "模型正在阅读…", "(no passage found)": "（未找到段落）",
    "THE MODEL'S ANSWER (BEING WRITTEN, THEN CHECKED)": "模型的回答（正在撰写，随后核对）",
    "The model's summary is not backed by these passages": "模型的总结没有得到这些段落的支持",
    "The model's review, not backed by the quotes it cites: check each point on its page "
    "(the quotes are in the Citations panel):": "模型的审阅没有得到其引文的支持：请在相应页面核对每一点（引文见“引文”面板）：",
    "THE MODEL'S NOTES (BEING WRITTEN, THEN CHECKED)": "模型的笔记（正在撰写，随后核对）",
    "The model's summary is not backed by these passages:": "模型的总结没有得到这些段落的支持：",
    "The document does not appear to address this question; the nearest passages:": "文档似乎没有涉及这个问题；最接近的段落：",
    "The passages on this set no figure, period or place for what is asked; the nearest passages:":
        "相关条文没有规定所问的具体数字、期限或地点；最接近的段落：",
    "The quote shares the answer's figures and words.": "引文与回答的数字和措辞一致。",
    "The quote may be on topic, but its words do not show the answer's claim: read the page.": "引文可能相关，但其文字并不能证明回答的说法：请阅读该页。",
    "The quote's figures or its negation differ from the answer's: read the page.": "引文的数字或否定与回答不同：请阅读该页。",
    "The quoted words are on this page (not yet a judgement of the answer).": "引用的文字在这一页上（尚未判断是否支持回答）。",
    "The quote was not found in the document: check it yourself.": "文档中找不到这段引文：请自行核对。",
    "Found before the model read anything; quoted from the page.": "在模型阅读之前找到；摘自页面原文。",
    "verified": "已核实", "unverified": "未核实", "retrieval": "检索段落", "whole-document": "整篇文档",
    "a new context began: the conversation no longer fitted": "开始了新的上下文：对话已放不下", "supports": "支持", "unclear": "不确定", "contradicts": "矛盾",
    # settings
    "Settings": "设置", "Engine…": "引擎…", "Automatic (the planner chooses)": "自动（由规划器选择）",
    "Remote endpoint (a team's server)": "远程端点（团队服务器）", "automatic": "自动",
    "as much as the machine allows": "机器允许的最大值", " words (tokens)": " 个词元 (token)", "words (tokens)": "个词元 (token)",
    "Larger reads more of a long document at once, but the first answer comes later and takes more memory.":
        "数值越大，一次读入的长文档越多，但第一个回答来得更晚，占用内存更多。",
    "automatic (10 s on a CPU, 3 s with a GPU)": "自动（CPU 上 10 秒，GPU 上 3 秒）",
    "Pagewise reads fewer passages when needed so the answer starts within this time.": "必要时 Pagewise 会少读一些段落，让回答在这个时间内开始。",
    "Follow the system": "跟随系统", "Light": "浅色", "Dark": "深色",
    "Remember PDF passwords (in the OS keyring)": "记住 PDF 密码（保存在系统密钥环中）",
    "No (the search's order)": "否（按搜索顺序）", "Yes, when there is time before the first words": "是，在第一个词出现前有时间时",
    "Processor cores to use": "使用的处理器核心数", "Longest text the model reads at once": "模型一次读入的最长文本",
    "Aim for the first words within": "力争在此时间内给出第一个词", "Model picks the best page": "由模型挑选最佳页面",
    "Model judges the evidence": "由模型评判证据", "When there is time before the first words": "在第一个词出现前有时间时",
    "Always (slow on a processor)": "总是（在处理器上较慢）", "No (the search's cards)": "否（按搜索的卡片）",
    "Model words the question as the document would": "由模型按文件的措辞改写问题", "No (the question's own words)": "否（按问题原文）",
    "Theme": "主题", "Interface language": "界面语言", "Remote endpoint (OpenAI-compatible)": "远程端点（兼容 OpenAI）",
    "URL": "网址 (URL)", "Model": "模型", "API key": "API 密钥", "unchanged (kept in the OS keyring)": "不变（保存在系统密钥环中）",
    "No keyring service is available on this system; Pagewise never stores secrets in plain text.":
        "此系统没有可用的密钥环服务；Pagewise 从不以明文保存机密。",
    "a remote engine needs its URL and model name": "远程引擎需要网址和模型名称",
    # the model manager
    "Models": "模型", "Download": "下载", "Needs": "需要", "On this machine": "在本机", "Installed": "已安装",
    "Good for": "适合", "First answer here": "本机首个回答", "Cancel download": "取消下载",
    "Import GGUF file…": "导入 GGUF 文件…", "Import AWQ folder…": "导入 AWQ 文件夹…", "Use this model": "使用此模型",
    "Close": "关闭", "yes": "是", "—": "—", "needs an NVIDIA GPU (vLLM)": "需要 NVIDIA GPU (vLLM)",
    "Reading the document…": "正在读取文档…", "evidence: the search's sentence, as printed": "证据：搜索找到的原句，与页面一致", "The engine failed to start (see the status bar).": "引擎未能启动（见状态栏）。",
    "Import a GGUF model": "导入 GGUF 模型",
    # Qt's own file dialog: strings its shipped Chinese lacks (Qt 6 added the mnemonics)
    "Look in:": "查找范围：", "Files of type:": "文件类型：", "Open PDF": "打开 PDF",
    "PDF documents (*.pdf)": "PDF 文档 (*.pdf)", "GGUF models (*.gguf)": "GGUF 模型 (*.gguf)",
    "Markdown (*.md)": "Markdown (*.md)",
    "PDF (*.pdf)": "PDF (*.pdf)", "Export answer": "导出回答", "Export conversation": "导出对话",
    # the citation card's second check and notes
    "supports the answer": "支持回答", "does not obviously support the answer": "不能明显支持回答",
    "near-verbatim: page wording shown": "近乎逐字：显示页面原文", "table cell: row, column and value found": "表格单元格：行、列和数值均已找到",
    # the planner's reasons (the engine's tooltip)
    "no NVIDIA GPU (NVML not found)": "没有 NVIDIA GPU（未找到 NVML）", "llama.cpp on the CPU": "llama.cpp（CPU）",
    "llama.cpp with GGUF weights, layers offloaded to the GPU": "llama.cpp 与 GGUF 权重，部分层放到 GPU 上",
    "no AWQ model available": "没有可用的 AWQ 模型",
    "The app's background work waits while a question is answered, so the answer has the processor to itself; it resumes after.":
        "回答问题时，应用的后台工作会等待，让回答独占处理器；回答后继续。",
    # what each catalogue model is good for (models.toml good_for)
    "trying Pagewise out: built in, no download, but often wrong — not for real work": "试用 Pagewise：内置、无需下载，但常出错——不适合正式工作",
    "quick answers on a small NVIDIA GPU (4 GB+); English and Chinese": "在小型 NVIDIA GPU（4 GB 以上）上快速回答；中英文皆可",
    "short questions on a laptop CPU or small GPU; English and Chinese": "在笔记本 CPU 或小型 GPU 上回答简短问题；中英文皆可",
    "reliable answers and reviews on an 8–12 GB GPU; English and Chinese": "在 8–12 GB GPU 上给出可靠的回答和审阅；中英文皆可",
    "reliable answers on a fast CPU (16 GB RAM) or partial GPU; English and Chinese": "在快速 CPU（16 GB 内存）或部分 GPU 上给出可靠回答；中英文皆可",
    "careful reading of long contracts on a GPU or fast CPU; English and Chinese": "在 GPU 或快速 CPU 上细读长合同；中英文皆可",
    "the most careful answers and clause comparisons on a 16–24 GB GPU": "在 16–24 GB GPU 上给出最严谨的回答和条款对比",
    "the most careful answers where 12 GB+ VRAM or 24 GB RAM and patience allow": "有 12 GB 以上显存或 24 GB 内存且不怕等待时，回答最严谨", "Import an AWQ model folder": "导入 AWQ 模型文件夹",
}

UNITS = {"s": "秒", "min": "分钟"}
KINDS = {"measured": "实测", "estimated": "估计"}
STATES = {"stopped": "已停止", "launching": "正在启动", "starting": "正在启动", "loading": "正在加载",
          "ready": "就绪", "failed": "失败", "dead": "已退出", "notresponding": "无响应", "calibrating": "正在校准",
          "calibrated": "已校准", "restarted": "已重启", "restarting": "正在重启", "downgrading": "正在降级"}

def _basis_zh(basis: str) -> str:
    """Where an advised model's time comes from (app.core.plan.advice), in Chinese."""
    import re
    how, _, tokens = basis.partition(", for a first question's ")
    tokens = tokens.replace(" prompt tokens", "")
    for pattern, words in ((r"measured here: reads (\d+) tokens/s", r"本机实测：每秒读 \1 个词元"),
                           (r"estimated from size and this CPU \((\d+) cores\)", r"按模型大小和本机 CPU（\1 核）估计"),
                           (r"estimated from size and this GPU", "按模型大小和本机 GPU 估计"),
                           (r"estimated from (.+) measured here, scaled by size", r"按本机实测的 \1 按参数量换算估计")):
        if re.fullmatch(pattern, how):
            return re.sub(pattern, words, how) + f"，以第一个问题的 {tokens} 个提示词元计"
    return basis


PATTERNS: list[tuple[str, object]] = [
    (r"(\d+) documents?, (\d+) pages?", r"\1 个文档，\2 页"),
    (r"(.*)Engine: (\w+)", lambda m: f"{m[1]}引擎：{STATES.get(m[2], m[2])}"),
    (r"System RAM in use: ([\d.]+) of ([\d.]+) GB", r"已用内存：\1 / \2 GB"),
    (r"A mutual non-disclosure agreement to try questions on \((.+)\)", r"一份双方保密协议，可用来试着提问（\1）"),
    (r"Stop asking (.+)", r"不再询问 \1"),
    (r"Asking (.+)", r"正在询问 \1"),
    (r"fits: llama\.cpp CPU / (\w+) \(slow on (\d+) cores\)", r"可运行：llama.cpp CPU / \1（\2 核上较慢）"),
    (r"fits: (.+)", r"可运行：\1"),
    (r"too big for (.+)", r"太大，超出 \1"),
    (r"This machine: ([^<]+)", lambda m: "本机：" + (lookup(m[1]) or m[1])),
    (r"no NVIDIA GPU \(NVML not found\); (.+) RAM \((.+) available\), (\d+) CPU cores, (.*)", r"没有 NVIDIA GPU；内存 \1（可用 \2），\3 个 CPU 核心，\4"),
    (r"Recommended here:", r"本机推荐："),
    (r"Recommended here: (.+)", r"本机推荐：\1"),
    (r"(.+)  — recommended", r"\1  — 推荐"),
    (r"(.+)  — in use", r"\1  — 使用中"),
    (r"(.+)  — recommended  — in use", r"\1  — 推荐  — 使用中"),
    (r"found in ([\d.]+) s, before the model reads anything", r"用时 \1 秒，模型尚未开始阅读"),
    (r"found in ([\d.]+) s, then chosen by the model as the likeliest to answer", r"用时 \1 秒找到，再由模型选出最可能回答问题的段落"),
    (r"found in ([\d.]+) s, then again with the model's wording of the question", r"用时 \1 秒找到，再按模型改写的问题重新查找"),
    (r"The model found no answer in the closest passages \((.+)\), which the search found on this question's "
     r"topic: read them\.", lambda m: f"模型在最接近的段落（{m[1].replace(', ', ' 页，').replace('p. ', '第 ')} 页）中没有找到答案；"
                                      "搜索认为它们与这个问题相关：请阅读它们。"),
    (r"(.*) · p\. (\d+)(.*)", r"\1 · 第 \2 页\3"),
    (r"Answers come from (.+), run by (.+)\.", r"回答来自 \1，由 \2 运行。"),
    (r"The answer engine did not start: (.+)", r"回答引擎未能启动：\1"),
    (r"Downloading (.+)…", r"正在下载 \1…"),
    (r"(.+): downloaded and verified", r"\1：已下载并校验"),
    (r"Restarting the engine with (.+)…", r"正在用 \1 重启引擎…"),
    (r"(.*)<topic from the ask box>(.*)", r"\1<提问框中的主题>\2"),
    (r"— (about .+)", lambda m: "— " + (lookup(m[1]) or m[1])),
    (r"too slow for this machine \(about (\d+) (s|min) to a first answer here\)",
     lambda m: f"对本机太慢（约 {m[1]} {UNITS[m[2]]}才给出第一个回答）"),
    (r"about (\d+) (s|min) to a first answer here \((.+, for a first question's [\d,]+ prompt tokens)\)",
     lambda m: f"本机约 {m[1]} {UNITS[m[2]]}给出第一个回答（{_basis_zh(m[3])}）"),
    (r"about (\d+) (s|min) to a first answer here \((measured|estimated)\)",
     lambda m: f"本机约 {m[1]} {UNITS[m[2]]}给出第一个回答（{KINDS[m[3]]}）"),
    (r"(\d+) (s|min) \((measured|estimated)\)", lambda m: f"{m[1]} {UNITS[m[2]]}（{KINDS[m[3]]}）"),
    (r"Download (.+) \((about .+ \((?:measured|estimated)\))\)", lambda m: f"下载 {m[1]}（{lookup(m[2])}）"),
    (r"Download (.+)\n(about .+)", lambda m: f"下载 {m[1]}\n{lookup(m[2]) or m[2]}"),
    (r"Download (.+)", r"下载 \1"),
    (r"([ℹ⚠]) (.+)", lambda m: f"{m[1]} {lookup(m[2]) or m[2]}"),
    (r"too long to read whole \(about (\d+)% fits\): answers use passages", r"太长，无法整篇读入（约 \1% 能放下）：回答使用段落"),
    (r"too long to read whole: answers use passages", r"太长，无法整篇读入：回答使用段落"),
    (r"writing the answer · (\d+) s · ([\d,]+) tokens? \(([\d.]+)/s\)", r"正在写回答 · \1 秒 · \2 个词元（每秒 \3）"),
    (r"writing the answer · (\d+) s · ([\d,]+) tokens?", r"正在写回答 · \1 秒 · \2 个词元"),
    (r"writing the answer · (\d+) s", r"正在写回答 · \1 秒"),
    (r"reading the (passages|documents): (\d+)% · (\d+) s left",
     lambda m: f"正在阅读{'段落' if m[1] == 'passages' else '文档'}：{m[2]}% · 还剩 {m[3]} 秒"),
    (r"reading the (passages|documents): (\d+)%", lambda m: f"正在阅读{'段落' if m[1] == 'passages' else '文档'}：{m[2]}%"),
    (r"(.+) paused while (answering|the engine measures its speed)",
     lambda m: " 和 ".join(JOBS.get(j, j) for j in m[1].split(" and ")) + "已暂停：" +
     ("正在回答" if m[2] == "answering" else "引擎正在测速")),
    (r"Search vectors: passage (%v|\d+) of (%m|\d+)", r"搜索向量：第 \1 段，共 \2 段"),
    (r"Conversations \((\d+)\)", r"对话（\1）"),
    (r"New conversation · (.+)", r"新对话 · \1"),
    (r"(.+) · (\d+) questions? · (.+)", r"\1 · \2 个问题 · \3"),
    (r"(✓ )?quote found on p\. (\d+)", r"\1第 \2 页找到引文"),
    (r"Indexing: page (\d+) of (\d+)", r"正在建立索引：第 \1 页，共 \2 页"),
    (r"(\d+) pages ≈ (\S+) tokens > (\S+) context: answers use the most relevant passages",
     r"\1 页 ≈ \2 词元 > \3 上下文：回答只用最相关的段落"),
    (r"no NVIDIA GPU → llama\.cpp on the CPU, GGUF (\S+), (\w+) context", r"没有 NVIDIA GPU → llama.cpp（CPU），GGUF \1，\2 上下文"),
    (r"first words in ([\d.]+) s", r"首字用时 \1 秒"),
    (r"([\d.]+) s in all", r"共 \1 秒"),
    (r"(\d+) unverified citations?", r"\1 条引文未核实"),
    (r"• ([^\n]+)", lambda m: "• " + (lookup(m[1]) or m[1])),
    (r"reads ([\d,]+) prompt tokens/s", r"每秒读入 \1 个提示词元"),
    (r"Engine KV cache: ([\d.]+) GB", r"引擎 KV 缓存：\1 GB"),
    (r"Engine KV cache in use: (\d+)% of its pool", r"引擎 KV 缓存已用：其池的 \1%"),
    (r"VRAM used ([\d.]+) of ([\d.]+) GB \(([\d.]+) GB free\)", r"显存已用 \1 / \2 GB（空闲 \3 GB）"),
    (r"page corrected from (\d+)", r"页码已从 \1 更正"),
    (r"(\d+) CPU cores: models up to ~([\d.]+)B parameters read a page in seconds",
     r"\1 个 CPU 核心：约 \2B 参数以内的模型几秒读完一页"),
    (r"(\d+) CPU cores: the smallest model", r"\1 个 CPU 核心：最小的模型"),
    (r"context (\S+) fits (\S+) GB of available RAM", r"\1 上下文可放入 \2 GB 可用内存"),
    (r"context (\S+)", r"上下文 \1"),
    (r"(all|\d+ of \d+) layers on the GPU \((\S+) GB free\), context (\S+)",
     lambda m: f"{'全部' if m[1] == 'all' else m[1].replace(' of ', ' / ') + ' '}层放在 GPU 上（空闲 {m[2]} GB），上下文 {m[3]}"),
    (r"(.+): vLLM with AWQ weights", r"\1：vLLM 与 AWQ 权重"),
    (r"KV cache ≈ (\S+) at ([\d,]+) bytes/token \((fp8|fp16)\) ≈ (\S+) tokens", r"KV 缓存 ≈ \1，每词元 \2 字节（\3）≈ \4 词元"),
    (r"capped at what the document needs \((\S+)\)", r"以文档所需为上限（\1）"),
    (r"tensor parallel over (\d+) equal GPUs", r"在 \1 块相同的 GPU 上做张量并行"),
    (r"Read (\d+) of (\d+) passages: the machine was slower than planned \(([\d.]+) tok/s measured vs "
     r"(?:([\d.]+) planned|no speed measured before)\); the lower-ranked passages were left out so the "
     r"answer starts on time\.",
     lambda m: f"只读了 {m[2]} 段中的 {m[1]} 段：机器比计划的慢（实测 {m[3]} tok/s，"
               f"{'计划 ' + m[4] if m[4] else '此前未测速'}）；排名靠后的段落被略去，以便按时开始回答。"),
    (r"Saved (.+) in (.+)", r"已保存 \1（位于 \2）"),
    # last, for lines built of pieces no pattern above knows whole ("retrieval · first words in
    # 8.0 s · 20.1 s in all · model", a card's notes "page corrected from 3; near-verbatim …",
    # the plan "…, 8K context; reads 121 prompt tokens/s"): each piece looked up on its own
    (r"[^\n]+ · [^\n]+", lambda m: " · ".join(lookup(p) or p for p in m[0].split(" · "))),
    (r"[^\n]+; [^\n]+", lambda m: "；".join(lookup(p) or p for p in m[0].split("; "))),
]

JOBS = {"search vectors": "搜索向量", "OCR": "OCR", "table detection": "表格检测", "background reading": "后台阅读"}

_COMPILED = [(re.compile(p, re.S), r) for p, r in PATTERNS]


def lookup(text: str) -> str | None:
    """The Chinese for `text` (already stripped, accelerator removed), or None."""
    found = EXACT.get(text)
    if found is not None:
        return found
    for pattern, repl in _COMPILED:
        m = pattern.fullmatch(text)
        if m:
            return repl(m) if callable(repl) else m.expand(repl)
    return None
