<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Activity</name>
    <message>
        <source>Sending…</source>
        <translation>正在发送…</translation>
    </message>
    <message>
        <source>Waiting for the reply…</source>
        <translation>正在等待回复…</translation>
    </message>
    <message>
        <source>Receiving the reply…</source>
        <translation>正在接收回复…</translation>
    </message>
    <message>
        <source>Compressing context…</source>
        <translation>正在压缩上下文…</translation>
    </message>
    <message>
        <source>Context too long: compressing and resending…</source>
        <translation>上下文过长：正在压缩并重新发送…</translation>
    </message>
    <message>
        <source>Preparing a summary in the background…</source>
        <translation>正在后台准备摘要…</translation>
    </message>
    <message>
        <source>Running tools…</source>
        <translation>正在运行工具…</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
</context>
<context>
    <name>AddTextDialog</name>
    <message>
        <source>Add text to the project</source>
        <translation>向项目添加文本</translation>
    </message>
    <message>
        <source>Title, e.g. “Style guide”</source>
        <translation>标题，例如“风格指南”</translation>
    </message>
    <message>
        <source>Title of the text</source>
        <translation>文本的标题</translation>
    </message>
    <message>
        <source>Paste or type what every chat of the project should know.</source>
        <translation>粘贴或输入项目中每个对话都应知道的内容。</translation>
    </message>
    <message>
        <source>Text to add</source>
        <translation>要添加的文本</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
</context>
<context>
    <name>AttachmentChip</name>
    <message>
        <source>Pasted text</source>
        <translation>粘贴的文本</translation>
    </message>
    <message>
        <source>Pasted image</source>
        <translation>粘贴的图片</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>PDF</source>
        <translation>PDF</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Checking…</source>
        <translation>检查中…</translation>
    </message>
    <message>
        <source>Remove {name}</source>
        <translation>移除 {name}</translation>
    </message>
    <message>
        <source>Attached: {name}</source>
        <translation>已附加：{name}</translation>
    </message>
    <message>
        <source>Cannot attach</source>
        <translation>无法附加</translation>
    </message>
</context>
<context>
    <name>BreakdownBar</name>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>Instructions</source>
        <translation>指令</translation>
    </message>
    <message>
        <source>Project</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Pinned</source>
        <translation>已固定</translation>
    </message>
    <message>
        <source>Messages</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Tool results</source>
        <translation>工具结果</translation>
    </message>
    <message>
        <source>Media</source>
        <translation>媒体</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Reserved for output</source>
        <translation>为输出预留</translation>
    </message>
    <message>
        <source>{name}: {tokens} tokens ({exact}), {share}</source>
        <translation>{name}：{tokens} 词元（{exact}），{share}</translation>
    </message>
</context>
<context>
    <name>Bridge</name>
    <message>
        <source>Something went wrong: {name}: {error}</source>
        <translation>出了点问题：{name}：{error}</translation>
    </message>
    <message>
        <source>Cannot attach: {error}</source>
        <translation>无法添加附件：{error}</translation>
    </message>
    <message>
        <source>Imported {n} server(s): {names}</source>
        <translation>已导入 {n} 个服务器：{names}</translation>
    </message>
    <message>
        <source>Nothing new to import</source>
        <translation>没有可导入的新内容</translation>
    </message>
</context>
<context>
    <name>ChatDelegate</name>
    <message>
        <source>pinned</source>
        <translation>已固定</translation>
    </message>
    <message>
        <source>Pinned: kept verbatim beside every summary (Unpin in its actions)</source>
        <translation>已固定：在每份摘要旁保留原文（可在其操作中取消固定）</translation>
    </message>
    <message>
        <source>shortened in the context sent to the model</source>
        <translation>发送给模型的上下文中已缩短</translation>
    </message>
    <message>
        <source>Older tool output or media in this message is sent to the model in a shortened form to save context. The full text stays here and in the history.</source>
        <translation>为节省上下文，这条消息中较早的工具输出或媒体以缩短的形式发送给模型。完整内容仍保留在这里和历史记录中。</translation>
    </message>
    <message>
        <source>Hide details</source>
        <translation>隐藏详情</translation>
    </message>
    <message>
        <source>Show details</source>
        <translation>显示详情</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Hide summary</source>
        <translation>隐藏摘要</translation>
    </message>
    <message>
        <source>View summary</source>
        <translation>查看摘要</translation>
    </message>
    <message>
        <source>Hide originals</source>
        <translation>隐藏原文</translation>
    </message>
    <message>
        <source>Show originals</source>
        <translation>显示原文</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Edit summary…</source>
        <translation>编辑摘要…</translation>
    </message>
    <message>
        <source>New chat from summary</source>
        <translation>用摘要开始新对话</translation>
    </message>
    <message>
        <source>Retry the summary</source>
        <translation>重新生成摘要</translation>
    </message>
    <message>
        <source>Cut off: the context window is full</source>
        <translation>已截断：上下文窗口已满</translation>
    </message>
    <message>
        <source>Cut off: the provider ended the reply early</source>
        <translation>已中断：服务提供方提前结束了回复</translation>
    </message>
    <message>
        <source>Cut off: output limit reached</source>
        <translation>已截断：达到输出上限</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>The reply was stopped before it finished; what arrived is kept.</source>
        <translation>回复在完成前被停止；已收到的内容会保留。</translation>
    </message>
    <message>
        <source>Hide thinking</source>
        <translation>隐藏思考过程</translation>
    </message>
    <message>
        <source>Show thinking</source>
        <translation>显示思考过程</translation>
    </message>
</context>
<context>
    <name>ChatInstructionsDialog</name>
    <message>
        <source>Chat instructions</source>
        <translation>对话指令</translation>
    </message>
    <message>
        <source>Instructions for this chat only, e.g. “Reply in French”.</source>
        <translation>仅用于此对话的指令，例如“用法语回复”。</translation>
    </message>
    <message>
        <source>Instructions for this chat</source>
        <translation>此对话的指令</translation>
    </message>
    <message>
        <source>The model receives these with every request of this chat, in its system prompt. Changing them starts a new prompt cache once.</source>
        <translation>此对话的每次请求都会把这些指令放在系统提示词中发给模型。修改后会重新建立一次提示缓存。</translation>
    </message>
    <message>
        <source>Default instructions (Settings), sent first: {text}</source>
        <translation>默认指令（设置中），最先发送：{text}</translation>
    </message>
    <message>
        <source>No default instructions (Settings).</source>
        <translation>没有默认指令（设置中）。</translation>
    </message>
</context>
<context>
    <name>ChatModel</name>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Summary card</source>
        <translation>摘要卡片</translation>
    </message>
    <message>
        <source>Notice</source>
        <translation>通知</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Version %1 of %2 (Alt+Left, Alt+Right)</source>
        <translation>第 %1 / %2 版（Alt+Left、Alt+Right）</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>Error: {detail}</source>
        <translation>错误：{detail}</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>Still being written</source>
        <translation>仍在生成</translation>
    </message>
    <message>
        <source>Cut off: Continue resumes it</source>
        <translation>已截断：点“继续”接着生成</translation>
    </message>
    <message>
        <source>Cut off</source>
        <translation>已截断</translation>
    </message>
    <message>
        <source>Shortened in the context sent to the model</source>
        <translation>发送给模型的上下文中已缩短</translation>
    </message>
    <message>
        <source>error: </source>
        <translation>错误：</translation>
    </message>
    <message>
        <source>+{n} lines</source>
        <translation>另有 {n} 行</translation>
    </message>
    <message>
        <source>{n} images</source>
        <translation>{n} 张图片</translation>
    </message>
    <message>
        <source>1 image</source>
        <translation>1 张图片</translation>
    </message>
    <message>
        <source>Context compacted · {count} messages summarised · ~{saved} tokens saved</source>
        <translation>上下文已压缩 · 摘要了 {count} 条消息 · 节省约 {saved} 词元</translation>
    </message>
    <message>
        <source>waiting for your permission</source>
        <translation>等待你的许可</translation>
    </message>
    <message>
        <source>running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <source>✖ error</source>
        <translation>✖ 出错</translation>
    </message>
    <message>
        <source>denied</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>(no output)</source>
        <translation>（无输出）</translation>
    </message>
    <message>
        <source>({n} images or documents)</source>
        <translation>（{n} 个图片或文档）</translation>
    </message>
    <message>
        <source>Image</source>
        <translation>图片</translation>
    </message>
    <message>
        <source>attachment</source>
        <translation>附件</translation>
    </message>
    <message>
        <source>{name} · text, {n:,} lines</source>
        <translation>{name} · 文本，{n:,} 行</translation>
    </message>
    <message>
        <source>{name} · PDF</source>
        <translation>{name} · PDF</translation>
    </message>
    <message>
        <source>[document: {name}]</source>
        <translation>[文档：{name}]</translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation>思考中…</translation>
    </message>
    <message>
        <source>Thinking (redacted)</source>
        <translation>思考（已隐去）</translation>
    </message>
</context>
<context>
    <name>ChatProfileButton</name>
    <message>
        <source>Default</source>
        <translation>默认</translation>
    </message>
    <message>
        <source>This chat uses the profile “{name}”; click to move it to another profile</source>
        <translation>此对话使用配置“{name}”；点击可改用其他配置</translation>
    </message>
    <message>
        <source>Profile of this chat: {name}</source>
        <translation>此对话的配置：{name}</translation>
    </message>
    <message>
        <source>No other profile: add one in Settings</source>
        <translation>没有其他配置：请在设置中添加</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <source>Start a conversation — Enter sends, Shift+Enter adds a line</source>
        <translation>开始对话 —— Enter 发送，Shift+Enter 换行</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Messages, oldest first. Ctrl+C copies the current message; the menu key shows its actions.</source>
        <translation>消息按时间先后排列。Ctrl+C 复制当前消息；菜单键显示可用操作。</translation>
    </message>
    <message>
        <source>Copy message</source>
        <translation>复制消息</translation>
    </message>
    <message>
        <source>Copy code block {n}</source>
        <translation>复制代码块 {n}</translation>
    </message>
    <message>
        <source>Copy link address</source>
        <translation>复制链接地址</translation>
    </message>
    <message>
        <source>Continue the reply</source>
        <translation>继续生成回复</translation>
    </message>
    <message>
        <source>Edit and resend…</source>
        <translation>编辑并重新发送…</translation>
    </message>
    <message>
        <source>Summarise up to here</source>
        <translation>摘要到此处</translation>
    </message>
    <message>
        <source>Summarise everything before this message; it and the rest stay verbatim</source>
        <translation>摘要这条消息之前的所有内容；这条消息及其后的内容保留原文</translation>
    </message>
    <message>
        <source>Delete message…</source>
        <translation>删除消息…</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation>上一版</translation>
    </message>
    <message>
        <source>Next version</source>
        <translation>下一版</translation>
    </message>
</context>
<context>
    <name>Cli</name>
    <message>
        <source>{error} (session {id})</source>
        <translation>{error}（对话 {id}）</translation>
    </message>
    <message>
        <source>sending…</source>
        <translation>正在发送…</translation>
    </message>
    <message>
        <source>waiting for the reply…</source>
        <translation>正在等待回复…</translation>
    </message>
    <message>
        <source>Compressing context…</source>
        <translation>正在压缩上下文…</translation>
    </message>
    <message>
        <source>Compressing context (the provider said it was too long), then resending…</source>
        <translation>正在压缩上下文（服务商提示内容过长），随后重新发送…</translation>
    </message>
    <message>
        <source>running tools…</source>
        <translation>正在运行工具…</translation>
    </message>
    <message>
        <source>--retry needs --session ID</source>
        <translation>--retry 需要 --session ID</translation>
    </message>
    <message>
        <source>--continue needs --session ID</source>
        <translation>--continue 需要 --session ID</translation>
    </message>
    <message>
        <source>empty message</source>
        <translation>消息为空</translation>
    </message>
    <message>
        <source>no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or save one in Settings</source>
        <translation>没有 API 密钥：请设置 ANTHROPIC_API_KEY（或 ANTHROPIC_AUTH_TOKEN），或在设置中保存一个</translation>
    </message>
    <message>
        <source>session {id}</source>
        <translation>对话 {id}</translation>
    </message>
    <message>
        <source>waiting for another Précis process (process {pid}) using this chat…</source>
        <translation>正在等待使用此对话的另一个 Précis 进程（进程 {pid}）…</translation>
    </message>
    <message>
        <source>{error}; the turn ended (session {id})</source>
        <translation>{error}；本轮已结束（对话 {id}）</translation>
    </message>
    <message>
        <source>the reply above could not be saved: {error} (your message is saved in session {id})</source>
        <translation>上面的回复无法保存：{error}（你的消息已保存在对话 {id} 中）</translation>
    </message>
    <message>
        <source>{error} (your message is saved in session {id}; retry with `precis chat --session {id} --retry`)</source>
        <translation>{error}（你的消息已保存在对话 {id} 中；可用 `precis chat --session {id} --retry` 重试）</translation>
    </message>
    <message>
        <source>stopped; the partial reply is kept</source>
        <translation>已停止；已收到的部分回复会保留</translation>
    </message>
    <message>
        <source>reply cut by {reason}; run `precis chat --session {id} --continue`</source>
        <translation>回复因 {reason} 被截断；运行 `precis chat --session {id} --continue` 继续</translation>
    </message>
    <message>
        <source>cannot attach {path}: {error}</source>
        <translation>无法添加附件 {path}：{error}</translation>
    </message>
    <message>
        <source>{id:&gt;5}  {messages:&gt;6} msgs  {used:&gt;8} tok  {title}</source>
        <translation>{id:&gt;5}  {messages:&gt;6} 条消息  {used:&gt;8} 词元  {title}</translation>
    </message>
    <message>
        <source>cannot write {path}: {error}</source>
        <translation>无法写入 {path}：{error}</translation>
    </message>
    <message>
        <source>wrote {path}</source>
        <translation>已写入 {path}</translation>
    </message>
    <message>
        <source>precis: error: {error}</source>
        <translation>precis：错误：{error}</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>denied</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>网址</translation>
    </message>
    <message>
        <source>headers</source>
        <translation>请求头</translation>
    </message>
    <message>
        <source>definition</source>
        <translation>定义</translation>
    </message>
    <message>
        <source>This command asks for the network: it could reach the internet, your local network and the services listening on this machine (the display, the session bus, agents&apos; sockets).</source>
        <translation>此命令要求使用网络：它可以访问互联网、你的局域网，以及本机上正在监听的服务（显示服务、会话总线、各类代理的套接字）。</translation>
    </message>
    <message>
        <source>This server changed since you allowed it (its {parts}): the approval given then does not cover it.</source>
        <translation>此服务器在你允许之后已更改（{parts}）：当时的批准不再适用。</translation>
    </message>
    <message>
        <source>built-in</source>
        <translation>内置</translation>
    </message>
    <message>
        <source>{tool} ({server}) wants to run with:</source>
        <translation>{tool}（{server}）请求以下列参数运行：</translation>
    </message>
    <message>
        <source>Allow? [o]nce / for this [c]hat / [a]lways for this tool / [d]eny: </source>
        <translation>允许吗？[o] 仅一次 / [c] 在此对话中 / [a] 此工具始终允许 / [d] 拒绝：</translation>
    </message>
    <message>
        <source>--workspace {path}: not a folder</source>
        <translation>--workspace {path}：不是文件夹</translation>
    </message>
    <message>
        <source>tool {name}: {status} ({seconds} s)</source>
        <translation>工具 {name}：{status}（{seconds} 秒）</translation>
    </message>
    <message>
        <source>MCP server {name} did not start: {error} (log: {log})</source>
        <translation>MCP 服务器 {name} 未能启动：{error}（日志：{log}）</translation>
    </message>
    <message>
        <source>imported {n} server(s) into {path}</source>
        <translation>已导入 {n} 个服务器到 {path}</translation>
    </message>
    <message>
        <source>no MCP servers configured ({path})</source>
        <translation>没有配置 MCP 服务器（{path}）</translation>
    </message>
</context>
<context>
    <name>CompactPreview</name>
    <message>
        <source>Summarise up to here</source>
        <translation>摘要到此处</translation>
    </message>
    <message>
        <source>Compact now</source>
        <translation>立即压缩</translation>
    </message>
    <message>
        <source>Tick a message to keep it verbatim: it is pinned beside the summary instead of being summarised.</source>
        <translation>勾选一条消息即可保留原文：它会固定在摘要旁，而不被摘要。</translation>
    </message>
    <message>
        <source>Messages the summary replaces</source>
        <translation>摘要将替代的消息</translation>
    </message>
    <message>
        <source>Focus (optional): what the summary must keep, e.g. the API design</source>
        <translation>重点（可选）：摘要必须保留的内容，例如 API 设计</translation>
    </message>
    <message>
        <source>Focus of the summary</source>
        <translation>摘要重点</translation>
    </message>
    <message>
        <source>Summarise</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>It takes nothing off later requests: by cost alone Précis would not make it.</source>
        <translation>它不会让之后的请求变小：只看成本，Précis 不会做这次摘要。</translation>
    </message>
    <message numerus="yes">
        <source>It pays for itself after about %n turn(s).</source>
        <translation>
            <numerusform>大约 %n 轮之后即可收回成本。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>It pays for itself after about %n turn(s); by cost alone Précis would wait.</source>
        <translation>
            <numerusform>大约 %n 轮之后才能收回成本；只看成本，Précis 会再等一等。</numerusform>
        </translation>
    </message>
    <message>
        <source>&lt;b&gt;Summarised: {n} messages&lt;/b&gt; (about {tokens} tokens).</source>
        <translation>&lt;b&gt;将摘要：{n} 条消息&lt;/b&gt;（约 {tokens} 词元）。</translation>
    </message>
    <message>
        <source>Kept verbatim: the {kept} newest messages.</source>
        <translation>保留原文：最新的 {kept} 条消息。</translation>
    </message>
    <message>
        <source>Pinned, kept verbatim beside the summary: {n}.</source>
        <translation>已固定、在摘要旁保留原文：{n} 条。</translation>
    </message>
    <message>
        <source>Every later request carries about {saving} tokens less{share}.</source>
        <translation>之后的每次请求约少 {saving} 词元{share}。</translation>
    </message>
    <message>
        <source>The summary costs about {cost}.</source>
        <translation>摘要费用约 {cost}。</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
</context>
<context>
    <name>CompactionCard</name>
    <message>
        <source>the summary failed: {reason}</source>
        <translation>摘要失败：{reason}</translation>
    </message>
    <message numerus="yes">
        <source>Context trimmed · %n oldest message(s) dropped without a summary</source>
        <translation>
            <numerusform>上下文已删减 · 未经摘要移除了最早的 %n 条消息</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Context compacted · %n message(s) summarised · ~{saved} tokens saved</source>
        <translation>
            <numerusform>上下文已压缩 · 摘要了 %n 条消息 · 节省约 {saved} 词元</numerusform>
        </translation>
    </message>
    <message>
        <source>summary cost {cost} (prompt read from the cache)</source>
        <translation>摘要费用 {cost}（提示从缓存读取）</translation>
    </message>
    <message>
        <source>summary cost {cost}</source>
        <translation>摘要费用 {cost}</translation>
    </message>
    <message>
        <source>saves ~{cost} per turn</source>
        <translation>每轮节省约 {cost}</translation>
    </message>
    <message>
        <source>made now: the reads it saves over ~{turns} turns outweigh its cost</source>
        <translation>现在生成：约 {turns} 轮中节省的读取超过了它的成本</translation>
    </message>
    <message>
        <source>made now: the context neared the end of the room</source>
        <translation>现在生成：上下文已接近空间上限</translation>
    </message>
    <message>
        <source>edited</source>
        <translation>已编辑</translation>
    </message>
    <message>
        <source>What the summary model wrote (refused):</source>
        <translation>摘要模型写下的内容（已拒绝）：</translation>
    </message>
    <message>
        <source>Summary failed · nothing was compacted</source>
        <translation>摘要失败 · 没有压缩任何内容</translation>
    </message>
    <message>
        <source>Why: {reason}</source>
        <translation>原因：{reason}</translation>
    </message>
    <message>
        <source>The model wrote nothing usable.</source>
        <translation>模型没有写出可用的内容。</translation>
    </message>
    <message>
        <source>What the summary model wrote:</source>
        <translation>摘要模型写下的内容：</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Message Claude — Enter sends, Shift+Enter adds a line</source>
        <translation>给 Claude 发消息 —— Enter 发送，Shift+Enter 换行</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter adds a line</source>
        <translation>Enter 发送，Shift+Enter 换行</translation>
    </message>
    <message>
        <source>Attach images, PDFs, text or code files (or drop / paste them here)</source>
        <translation>附加图片、PDF、文本或代码文件（也可拖放或粘贴到这里）</translation>
    </message>
    <message>
        <source>Attach files</source>
        <translation>添加附件</translation>
    </message>
    <message>
        <source>Remove all</source>
        <translation>全部移除</translation>
    </message>
    <message>
        <source>Remove the attachments</source>
        <translation>移除附件</translation>
    </message>
    <message>
        <source>Cancel edit</source>
        <translation>取消编辑</translation>
    </message>
    <message>
        <source>Leave the edit; nothing is changed (Esc)</source>
        <translation>退出编辑，不做任何更改（Esc）</translation>
    </message>
    <message>
        <source>Send message</source>
        <translation>发送消息</translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation>发送（Enter）</translation>
    </message>
    <message>
        <source>Stop the reply</source>
        <translation>停止回复</translation>
    </message>
    <message>
        <source>Stop the reply; what has arrived is kept</source>
        <translation>停止回复；已收到的内容会保留</translation>
    </message>
    <message>
        <source>Cannot attach: {reason}</source>
        <translation>无法附加：{reason}</translation>
    </message>
    <message>
        <source>All files (*);;Images, PDFs, text and code ({p})</source>
        <translation>所有文件 (*);;图片、PDF、文本和代码 ({p})</translation>
    </message>
</context>
<context>
    <name>ContextGauge</name>
    <message>
        <source>Context usage</source>
        <translation>上下文用量</translation>
    </message>
    <message>
        <source>No context usage data yet.</source>
        <translation>尚无上下文用量数据。</translation>
    </message>
    <message>
        <source>{used} tokens used; capacity unknown.</source>
        <translation>已用 {used} 词元；容量未知。</translation>
    </message>
    <message>
        <source>{used} of {window} tokens used ({pct}). Next turn about {nxt} ({npct}).</source>
        <translation>已用 {used} / {window} 词元（{pct}）。下一轮约 {nxt}（{npct}）。</translation>
    </message>
    <message>
        <source>Context is getting full.</source>
        <translation>上下文快满了。</translation>
    </message>
    <message>
        <source>Context almost full.</source>
        <translation>上下文几乎已满。</translation>
    </message>
    <message>
        <source>Summary active.</source>
        <translation>摘要已启用。</translation>
    </message>
</context>
<context>
    <name>ContextLine</name>
    <message>
        <source>{used} used</source>
        <translation>已用 {used}</translation>
    </message>
</context>
<context>
    <name>DefaultInstructions</name>
    <message>
        <source>Default instructions</source>
        <translation>默认指令</translation>
    </message>
    <message>
        <source>For example: answer briefly; prefer Python 3.12; explain trade-offs.</source>
        <translation>例如：回答简洁；优先使用 Python 3.12；说明利弊取舍。</translation>
    </message>
    <message>
        <source>Default instructions for every chat</source>
        <translation>所有对话的默认指令</translation>
    </message>
    <message>
        <source>Sent with every chat, before the chat&apos;s own instructions; kept in the prompt cache.</source>
        <translation>随每个对话发送，位于对话自身的指令之前；保留在提示缓存中。</translation>
    </message>
</context>
<context>
    <name>Engine</name>
    <message>
        <source>API key (x-api-key header)</source>
        <translation>API 密钥（x-api-key 请求头）</translation>
    </message>
    <message>
        <source>Bearer token (Authorization header)</source>
        <translation>持有者令牌（Authorization 请求头）</translation>
    </message>
    <message>
        <source>No key (a local server)</source>
        <translation>无需密钥（本地服务器）</translation>
    </message>
    <message>
        <source>A profile needs a name.</source>
        <translation>配置需要一个名称。</translation>
    </message>
    <message>
        <source>Two profiles are called “{name}”: give each its own name.</source>
        <translation>有两个配置都叫“{name}”：请为它们分别命名。</translation>
    </message>
    <message>
        <source>Précis needs one profile to send with: add another before deleting this one.</source>
        <translation>Précis 至少需要一个配置来发送消息：请先添加另一个，再删除这个。</translation>
    </message>
    <message>
        <source>Too many images or documents for this model: {raw}</source>
        <translation>图片或文档超出了该模型的上限：{raw}</translation>
    </message>
    <message>
        <source>The conversation no longer fits the model&apos;s context window ({raw}).</source>
        <translation>对话已超出模型的上下文窗口（{raw}）。</translation>
    </message>
    <message>
        <source>The provider rejected the API key ({status}): {text}. Check the key in Settings.</source>
        <translation>服务商拒绝了 API 密钥（{status}）：{text}。请在设置中检查密钥。</translation>
    </message>
    <message>
        <source>Rate limited by the provider: {text}. Wait a moment and retry.</source>
        <translation>服务商限制了请求频率：{text}。请稍候再重试。</translation>
    </message>
    <message>
        <source>The provider is overloaded right now. Retry in a moment.</source>
        <translation>服务商当前负载过高，请稍后重试。</translation>
    </message>
    <message>
        <source>The provider had an internal error ({status}): {text}</source>
        <translation>服务商内部出错（{status}）：{text}</translation>
    </message>
    <message>
        <source>The provider refused the request ({status}): {text}</source>
        <translation>服务商拒绝了请求（{status}）：{text}</translation>
    </message>
    <message>
        <source>Provider error ({status}): {text}</source>
        <translation>服务商错误（{status}）：{text}</translation>
    </message>
    <message>
        <source>The request timed out. Check the connection and retry.</source>
        <translation>请求超时。请检查网络连接后重试。</translation>
    </message>
    <message>
        <source>Could not reach the provider. Check the base URL and your connection.</source>
        <translation>无法连接服务商。请检查基础 URL 和网络连接。</translation>
    </message>
    <message>
        <source>The provider sent a malformed response. Retry; if it keeps happening, check the base URL.</source>
        <translation>服务商返回的响应格式有误。请重试；如果反复出现，请检查基础 URL。</translation>
    </message>
    <message>
        <source>The connection dropped while receiving the reply ({name}).</source>
        <translation>接收回复时连接中断（{name}）。</translation>
    </message>
    <message>
        <source>Unexpected error: {name}: {error}</source>
        <translation>意外错误：{name}：{error}</translation>
    </message>
    <message>
        <source>The provider sent no reply within {seconds} s of the request (at most keep-alive pings); your message is kept. Retry; a provider that is slow to start may need a longer first_byte_timeout in settings.json.</source>
        <translation>服务商在请求发出后 {seconds} 秒内没有发来回复（至多只有保活 ping）；你的消息已保留。请重试；启动较慢的服务商可能需要在 settings.json 中调大 first_byte_timeout。</translation>
    </message>
    <message>
        <source>The provider stopped sending the reply for {seconds} s (at most keep-alive pings); what arrived is kept. Retry; a slow provider may need a longer idle_timeout in settings.json.</source>
        <translation>服务商已有 {seconds} 秒没有继续发送回复（至多只有保活 ping）；已收到的内容已保留。请重试；较慢的服务商可能需要在 settings.json 中调大 idle_timeout。</translation>
    </message>
    <message>
        <source>The provider sent {what}; your message is kept. Retry, and check the base URL if it keeps happening.</source>
        <translation>服务商发来了{what}；你的消息已保留。请重试；如果反复出现，请检查基础 URL。</translation>
    </message>
    <message>
        <source>a JSON body where the reply&apos;s event stream was expected ({text})</source>
        <translation>一个 JSON 正文，而不是预期的回复事件流（{text}）</translation>
    </message>
    <message>
        <source>a {kind} page where the reply&apos;s event stream was expected</source>
        <translation>一个 {kind} 页面，而不是预期的回复事件流</translation>
    </message>
    <message>
        <source>a response with no reply events in it</source>
        <translation>一个不含任何回复事件的响应</translation>
    </message>
    <message>
        <source>a stream that ended before any of the reply</source>
        <translation>一个在回复开始前就结束的流</translation>
    </message>
    <message>
        <source>a {event} event before the reply had started</source>
        <translation>回复开始之前的 {event} 事件</translation>
    </message>
    <message>
        <source>an event for a content block it never started</source>
        <translation>一个针对从未开始的内容块的事件</translation>
    </message>
    <message>
        <source>text that is not valid UTF-8</source>
        <translation>不是有效 UTF-8 的文本</translation>
    </message>
    <message>
        <source>an event whose data is not valid JSON</source>
        <translation>一个数据不是有效 JSON 的事件</translation>
    </message>
    <message>
        <source>a tool call whose input is not valid JSON</source>
        <translation>一个输入不是有效 JSON 的工具调用</translation>
    </message>
    <message>
        <source>an event Précis cannot read</source>
        <translation>一个 Précis 无法读取的事件</translation>
    </message>
    <message>
        <source>a reply whose stream ended before its end (no message_stop)</source>
        <translation>一个流在结束前就中断的回复（没有 message_stop）</translation>
    </message>
    <message>
        <source>The provider&apos;s address redirects in a loop (too many redirects); check the base URL.</source>
        <translation>服务商的地址陷入重定向循环（重定向次数过多）；请检查基础 URL。</translation>
    </message>
    <message>
        <source>The provider sent response headers too large to read; check the base URL (a proxy may be answering).</source>
        <translation>服务商发来的响应头过大，无法读取；请检查基础 URL（可能是代理在应答）。</translation>
    </message>
    <message>
        <source>The provider ended the stream before the reply was finished (no message_stop); what arrived is kept, marked cut: Continue asks the model to go on.</source>
        <translation>服务商在回复完成前结束了流（没有 message_stop）；已收到的内容已保留并标记为被截断：“继续”会让模型接着写。</translation>
    </message>
    <message>
        <source>A reply is streaming: compact when it has finished.</source>
        <translation>回复正在生成：请等它结束后再压缩。</translation>
    </message>
    <message>
        <source>Compaction stopped; nothing changed.</source>
        <translation>压缩已停止；没有任何更改。</translation>
    </message>
    <message>
        <source>This chat was compacted elsewhere (another window or command) while this summary was being written; nothing was changed here. Compact again if it is still needed.</source>
        <translation>生成这份摘要期间，此对话已在别处（另一个窗口或命令）被压缩；这里没有做任何更改。如仍需要，请再压缩一次。</translation>
    </message>
    <message>
        <source>Compaction undone: the next request is built from the originals.</source>
        <translation>已撤销压缩：下一次请求将使用原始消息构建。</translation>
    </message>
    <message>
        <source>Your edit was undone: the previous summary is in use again.</source>
        <translation>你的编辑已撤销：重新使用之前的摘要。</translation>
    </message>
    <message>
        <source>Summary undone: the previous summary is in use again.</source>
        <translation>摘要已撤销：重新使用之前的摘要。</translation>
    </message>
    <message>
        <source>Stopped after {rounds} tool rounds in a row that only repeated earlier calls with the same results; send a message to continue.</source>
        <translation>连续 {rounds} 轮工具调用只是在重复先前结果相同的调用，已停止；发送一条消息即可继续。</translation>
    </message>
    <message>
        <source>Stopped after {calls} model calls in one turn (the per-turn limit in Settings); send a message to continue.</source>
        <translation>本轮已调用模型 {calls} 次（设置中的每轮上限），已停止；发送一条消息即可继续。</translation>
    </message>
    <message>
        <source>Older images were left out to stay under the provider&apos;s media limit.</source>
        <translation>为不超出服务商的媒体数量上限，较早的图片未发送。</translation>
    </message>
    <message>
        <source>The cut reply is no longer in the context; ask the model to go on instead.</source>
        <translation>被截断的回复已不在上下文中；请直接让模型接着写。</translation>
    </message>
    <message>
        <source>The reply could not be saved: {error} It is kept in memory: Retry saves it without asking the model again.</source>
        <translation>回复无法保存：{error} 它仍保留在内存中：点“重试”即可保存，无需再次请求模型。</translation>
    </message>
    <message>
        <source>The reply filled the context window and was cut short; the context will be compacted before the next turn.</source>
        <translation>回复占满了上下文窗口而被截断；下一轮开始前会先压缩上下文。</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>上下文</translation>
    </message>
    <message>
        <source>This message is about {need:,} tokens, more than the {room:,} the model {model} can read (its context window less the room kept for the reply). Nothing was sent: shorten it or split it into parts.</source>
        <translation>这条消息约 {need:,} 词元，超过了模型 {model} 能读取的 {room:,} 词元（上下文窗口减去为回复预留的空间）。未发送任何内容：请缩短或拆分成几部分。</translation>
    </message>
    <message>
        <source>nothing to continue: the newest reply was not cut short</source>
        <translation>没有可继续的内容：最新的回复并未被截断</translation>
    </message>
    <message>
        <source>Nothing to compact yet: everything is in the recent verbatim tail.</source>
        <translation>暂无可压缩的内容：所有消息都在最近保留原文的部分中。</translation>
    </message>
    <message>
        <source>Nothing to summarise before this message.</source>
        <translation>这条消息之前没有可摘要的内容。</translation>
    </message>
    <message>
        <source>Summary edited: the next request carries your text. Undo restores the previous summary.</source>
        <translation>摘要已编辑：下一次请求将使用你的文字。“撤销”可恢复之前的摘要。</translation>
    </message>
    <message>
        <source>The summary would not have made the context smaller; nothing was changed.</source>
        <translation>摘要无法让上下文变小；没有做任何更改。</translation>
    </message>
    <message>
        <source>Summary failed: {error}.</source>
        <translation>摘要失败：{error}。</translation>
    </message>
    <message>
        <source>No summary yet: it would free about {gap:,} tokens, whose reads over about {turns} turns ({saving:,}) cost less than the summary and the re-write of the prompt it leaves ({cost:,}).</source>
        <translation>暂不生成摘要：它将释放约 {gap:,} 个 token，约 {turns} 轮中这些 token 的读取（{saving:,}）低于摘要及其留下的提示词重写的成本（{cost:,}）。</translation>
    </message>
    <message>
        <source>No summary: it would not make the context smaller ({used:,} tokens now, about {after:,} after).</source>
        <translation>不生成摘要：它不会让上下文变小（当前 {used:,} 个 token，之后约 {after:,} 个）。</translation>
    </message>
    <message>
        <source>Automatic summaries are paused after 3 failures; Compact now retries.</source>
        <translation>连续失败 3 次后自动摘要已暂停；点“立即压缩”可重试。</translation>
    </message>
    <message>
        <source>Summaries are failing with {model}: the chat drops its oldest messages instead, in batches, and tries a summary again now and then.</source>
        <translation>使用 {model} 生成摘要一直失败：对话改为分批移除最早的消息，并不时再尝试摘要。</translation>
    </message>
    <message>
        <source>Nothing could be dropped: only the latest exchange is left.</source>
        <translation>无法再删减：只剩下最近一轮对话。</translation>
    </message>
    <message>
        <source>Dropped {count} oldest messages from the context (no summary available).</source>
        <translation>已从上下文中移除最早的 {count} 条消息（无法生成摘要）。</translation>
    </message>
    <message>
        <source>Dropped the oldest message from the context (no summary available).</source>
        <translation>已从上下文中移除最早的 1 条消息（无法生成摘要）。</translation>
    </message>
    <message>
        <source>The provider does not list its models (GET /v1/models did not answer); type the model&apos;s name.</source>
        <translation>服务商未提供模型列表（GET /v1/models 无响应）；请手动输入模型名称。</translation>
    </message>
    <message>
        <source>Models offered: {count} ({shown}).</source>
        <translation>可用模型：{count} 个（{shown}）。</translation>
    </message>
    <message>
        <source>Models offered: {count} ({shown} and {more} more).</source>
        <translation>可用模型：{count} 个（{shown} 等另外 {more} 个）。</translation>
    </message>
    <message>
        <source>The provider lists no models.</source>
        <translation>服务商的模型列表为空。</translation>
    </message>
    <message>
        <source>The provider refused the credentials ({auth}): {error}</source>
        <translation>服务商拒绝了凭据（{auth}）：{error}</translation>
    </message>
    <message>
        <source>The test message to {model} failed: {error}</source>
        <translation>发给 {model} 的测试消息失败：{error}</translation>
    </message>
    <message>
        <source>no key was needed</source>
        <translation>无需密钥</translation>
    </message>
    <message>
        <source>the {auth} was accepted</source>
        <translation>{auth}验证通过</translation>
    </message>
    <message>
        <source>Connected: {model} answered a test message ({tokens_in} tokens in, {tokens_out} out); {how}.</source>
        <translation>已连接：{model} 回复了测试消息（输入 {tokens_in} 词元，输出 {tokens_out}）；{how}。</translation>
    </message>
    <message>
        <source>Context window of {model}: {window:,} tokens (from the provider).</source>
        <translation>{model} 的上下文窗口：{window:,} 词元（来自服务商）。</translation>
    </message>
    <message>
        <source>Context window of {model}: {window:,} tokens (from your override).</source>
        <translation>{model} 的上下文窗口：{window:,} 词元（来自你的自定义值）。</translation>
    </message>
    <message>
        <source>Context window of {model}: {window:,} tokens (from the built-in catalog).</source>
        <translation>{model} 的上下文窗口：{window:,} 词元（来自内置目录）。</translation>
    </message>
    <message>
        <source>The context window of {model} is unknown: set it below, or Précis learns it from the provider&apos;s first &quot;too long&quot; error.</source>
        <translation>{model} 的上下文窗口未知：可在下方设置，或由 Précis 从服务商第一次返回的“过长”错误中获知。</translation>
    </message>
    <message>
        <source>Note: {model} is not in the provider&apos;s list, but it answered.</source>
        <translation>注意：{model} 不在服务商的列表中，但它有回复。</translation>
    </message>
    <message>
        <source>A project named “{name}” exists already.</source>
        <translation>已有名为“{name}”的项目。</translation>
    </message>
    <message>
        <source>A project needs a name.</source>
        <translation>项目需要一个名称。</translation>
    </message>
    <message>
        <source>No project named “{name}”.</source>
        <translation>没有名为“{name}”的项目。</translation>
    </message>
    <message>
        <source>Nothing to add: the text is empty.</source>
        <translation>没有可添加的内容：文本为空。</translation>
    </message>
    <message>
        <source>The project has no knowledge named “{name}”.</source>
        <translation>该项目中没有名为“{name}”的资料。</translation>
    </message>
    <message>
        <source>Summarised now: it frees about {gap:,} tokens, whose reads over about {turns} turns ({saving:,}) outweigh the summary and the re-write of the prompt it leaves ({cost:,}).</source>
        <translation>已生成摘要：它释放约 {gap:,} 个 token，约 {turns} 轮中这些 token 的读取（{saving:,}）超过了摘要及其留下的提示词重写的成本（{cost:,}）。</translation>
    </message>
    <message>
        <source>Summarised now: the context reached {used:,} tokens, near the end of the room, where a summary is made whether it pays or not.</source>
        <translation>已生成摘要：上下文已达 {used:,} 个 token，接近空间上限，此时无论是否划算都会生成摘要。</translation>
    </message>
    <message>
        <source>Context compacted · {messages} messages summarised · ~{saved:,} tokens saved</source>
        <translation>上下文已压缩 · 摘要了 {messages} 条消息 · 节省约 {saved:,} 词元</translation>
    </message>
    <message>
        <source>Context compacted · 1 message summarised · ~{saved:,} tokens saved</source>
        <translation>上下文已压缩 · 摘要了 1 条消息 · 节省约 {saved:,} 词元</translation>
    </message>
    <message>
        <source>No system keyring is available (no Secret Service, Keychain or Credential Locker was found), so Précis cannot save the key in one. Keep it in a private file only you can read (mode 0600), or use it for this run only.</source>
        <translation>没有可用的系统密钥环（未找到 Secret Service、Keychain 或 Credential Locker），Précis 无法将密钥保存到密钥环中。可以将其保存在只有你能读取的私有文件中（权限 0600），或仅在本次运行中使用。</translation>
    </message>
    <message>
        <source>No system keyring is available, so Précis cannot save the key safely. You can use it for this run only.</source>
        <translation>没有可用的系统密钥环，Précis 无法安全地保存密钥。你可以仅在本次运行中使用它。</translation>
    </message>
    <message>
        <source>The system keyring refused the key: {error}</source>
        <translation>系统密钥环拒绝保存密钥：{error}</translation>
    </message>
    <message>
        <source>imported {count} messages into session {session} ({title})</source>
        <translation>已将 {count} 条消息导入对话 {session}（{title}）</translation>
    </message>
    <message>
        <source>skipped {count} malformed lines</source>
        <translation>跳过了 {count} 行格式错误的内容</translation>
    </message>
    <message>
        <source>skipped records: {reasons}</source>
        <translation>跳过的记录：{reasons}</translation>
    </message>
    <message>
        <source>compacted history kept as a summary (covers messages up to {through})</source>
        <translation>已压缩的历史保留为摘要（涵盖到第 {through} 条消息）</translation>
    </message>
    <message>
        <source>{path} is not a regular file (a device, pipe or socket); import a .jsonl file</source>
        <translation>{path} 不是普通文件（而是设备、管道或套接字）；请导入 .jsonl 文件</translation>
    </message>
    <message>
        <source>no such file: {path}</source>
        <translation>文件不存在：{path}</translation>
    </message>
    <message>
        <source>{path} is a directory, not a .jsonl file</source>
        <translation>{path} 是文件夹，不是 .jsonl 文件</translation>
    </message>
    <message>
        <source>cannot read {path}: {error}</source>
        <translation>无法读取 {path}：{error}</translation>
    </message>
    <message>
        <source>{path} is not a Claude Code JSONL transcript ({count} lines are not JSON records)</source>
        <translation>{path} 不是 Claude Code 的 JSONL 对话记录（有 {count} 行不是 JSON 记录）</translation>
    </message>
    <message>
        <source>{path} holds no conversation messages to import</source>
        <translation>{path} 中没有可导入的对话消息</translation>
    </message>
    <message>
        <source>Chat {session} is busy: another Précis (process {pid}) is running a reply in it, and it did not finish within {waited} s; nothing was sent or saved. Try again when it is done.</source>
        <translation>对话 {session} 正忙：另一个 Précis（进程 {pid}）正在其中生成回复，{waited} 秒内未结束；没有发送或保存任何内容。请等它结束后再试。</translation>
    </message>
    <message>
        <source>Chat {session} is busy: another Précis (process {pid} on {host}) is running a reply in it, and it did not finish within {waited} s; nothing was sent or saved. Try again when it is done.</source>
        <translation>对话 {session} 正忙：另一个 Précis（{host} 上的进程 {pid}）正在其中生成回复，{waited} 秒内未结束；没有发送或保存任何内容。请等它结束后再试。</translation>
    </message>
    <message>
        <source>settings.json could not be read ({error}); using the defaults</source>
        <translation>无法读取 settings.json（{error}）；改用默认设置</translation>
    </message>
    <message>
        <source>settings.json holds {kind}, not an object; using the defaults</source>
        <translation>settings.json 的内容是{kind}，而不是对象；改用默认设置</translation>
    </message>
    <message>
        <source>{name}: {value} is outside {lo}..{hi}; using {fixed}</source>
        <translation>{name}：{value} 超出 {lo}..{hi} 的范围；改用 {fixed}</translation>
    </message>
    <message>
        <source>{name}: expected a whole number, got {value}; using {default}</source>
        <translation>{name}：应为整数，实际为 {value}；改用 {default}</translation>
    </message>
    <message>
        <source>{name}: {value} is not a whole number; using {fixed}</source>
        <translation>{name}：{value} 不是整数；改用 {fixed}</translation>
    </message>
    <message>
        <source>{name}: expected a number, got {value}; using {default}</source>
        <translation>{name}：应为数字，实际为 {value}；改用 {default}</translation>
    </message>
    <message>
        <source>{name}: expected a model id, got {value}; using the default</source>
        <translation>{name}：应为模型 ID，实际为 {value}；改用默认值</translation>
    </message>
    <message>
        <source>{name}: expected text, got {value}; using the default</source>
        <translation>{name}：应为文本，实际为 {value}；改用默认值</translation>
    </message>
    <message>
        <source>{name}: expected true or false, got {value}; using the default</source>
        <translation>{name}：应为 true 或 false，实际为 {value}；改用默认值</translation>
    </message>
    <message>
        <source>{name}: expected text, got {value}; using none</source>
        <translation>{name}：应为文本，实际为 {value}；不使用</translation>
    </message>
    <message>
        <source>language: expected &quot;&quot;, &quot;en&quot; or &quot;zh_CN&quot;, got {value}; following the system</source>
        <translation>language：应为 &quot;&quot;、&quot;en&quot; 或 &quot;zh_CN&quot;，实际为 {value}；改为跟随系统</translation>
    </message>
    <message>
        <source>profiles: an entry without a name was ignored</source>
        <translation>profiles：已忽略一个没有名称的条目</translation>
    </message>
    <message>
        <source>model_overrides: expected an object, got {kind}; ignored</source>
        <translation>model_overrides：应为对象，实际为{kind}；已忽略</translation>
    </message>
    <message>
        <source>model_overrides: an empty model id; ignored</source>
        <translation>model_overrides：模型 ID 为空；已忽略</translation>
    </message>
    <message>
        <source>{where}: expected an object or a window size, got {value}; ignored</source>
        <translation>{where}：应为对象或窗口大小，实际为 {value}；已忽略</translation>
    </message>
    <message>
        <source>{where}: expected a positive whole number, got {value}; ignored</source>
        <translation>{where}：应为正整数，实际为 {value}；已忽略</translation>
    </message>
    <message>
        <source>{where}: expected a price of 0 or more, got {value}; ignored</source>
        <translation>{where}：价格应不小于 0，实际为 {value}；已忽略</translation>
    </message>
    <message>
        <source>{where}: expected {one} or {other}, got {value}; ignored</source>
        <translation>{where}：应为 {one} 或 {other}，实际为 {value}；已忽略</translation>
    </message>
    <message>
        <source>{where}: unknown key {key} ignored</source>
        <translation>{where}：已忽略未知的键 {key}</translation>
    </message>
    <message>
        <source>The database {path} {what}; it was left untouched. To start fresh, move it aside (for example rename it to {name}.broken) and start Précis again; or put back a backup of it.</source>
        <translation>数据库 {path} {what}；它没有被改动。如需重新开始，请把它移走（例如重命名为 {name}.broken）后再启动 Précis；或者放回它的备份。</translation>
    </message>
    <message>
        <source>is not an SQLite database (another program&apos;s file, or damaged)</source>
        <translation>不是 SQLite 数据库（是其他程序的文件，或已损坏）</translation>
    </message>
    <message>
        <source>is cut short ({size:,} of {expected:,} bytes)</source>
        <translation>不完整（只有 {size:,} / {expected:,} 字节）</translation>
    </message>
    <message>
        <source>is damaged ({error})</source>
        <translation>已损坏（{error}）</translation>
    </message>
    <message>
        <source>The database {path} is locked by another program and stayed locked for {waited} s; close the other program (or another Précis) and try again.</source>
        <translation>数据库 {path} 被另一个程序锁定，{waited} 秒后仍未释放；请关闭那个程序（或另一个 Précis）后重试。</translation>
    </message>
    <message>
        <source>The database {path} cannot be written (read-only disk or no permission); nothing was changed. Make the folder writable, or set PRECIS_HOME to another one.</source>
        <translation>无法写入数据库 {path}（磁盘只读或没有权限）；没有做任何更改。请让该文件夹可写，或把 PRECIS_HOME 设为另一个文件夹。</translation>
    </message>
    <message>
        <source>The disk holding {path} is full; nothing was changed. Free some space and try again.</source>
        <translation>{path} 所在的磁盘已满；没有做任何更改。请腾出一些空间后重试。</translation>
    </message>
    <message>
        <source>{path} cannot be written (read-only disk or no permission); nothing was changed. Make it writable, or set PRECIS_HOME to another folder.</source>
        <translation>无法写入 {path}（磁盘只读或没有权限）；没有做任何更改。请让它可写，或把 PRECIS_HOME 设为另一个文件夹。</translation>
    </message>
    <message>
        <source>{path} is in the way: Précis needs a folder there and found a file (or the other way round); it was left untouched. Move it, or set PRECIS_HOME to another folder.</source>
        <translation>{path} 挡住了路：Précis 需要在那里放一个文件夹，却发现了一个文件（或者相反）；它没有被改动。请把它移走，或把 PRECIS_HOME 设为另一个文件夹。</translation>
    </message>
    <message>
        <source>{path}: {error}; nothing was changed.</source>
        <translation>{path}：{error}；没有做任何更改。</translation>
    </message>
    <message>
        <source>The database {path} cannot be opened ({error}); it was left untouched. Check that its folder exists and is readable, or set PRECIS_HOME to another folder.</source>
        <translation>无法打开数据库 {path}（{error}）；它没有被改动。请检查它所在的文件夹是否存在且可读，或把 PRECIS_HOME 设为另一个文件夹。</translation>
    </message>
    <message>
        <source>The database {path} could not be written or read ({error}); nothing was lost that was saved before. Check the disk (space, errors) and try again.</source>
        <translation>无法读写数据库 {path}（{error}）；之前已保存的内容都没有丢失。请检查磁盘（空间、错误）后重试。</translation>
    </message>
    <message>
        <source>The database {path} is locked by another program (perhaps another Précis); waiting up to {wait} s for it.</source>
        <translation>数据库 {path} 被另一个程序（可能是另一个 Précis）锁定；最多等待 {wait} 秒。</translation>
    </message>
    <message>
        <source>{path} could not be written: this process may not write files larger than {limit:,} bytes (the file size limit, ulimit -f); nothing was changed. Raise the limit and try again.</source>
        <translation>{path} 无法写入：此进程不能写入大于 {limit:,} 字节的文件（文件大小限制，ulimit -f）；没有做任何更改。请提高该限制后重试。</translation>
    </message>
    <message>
        <source>{path} could not be written or read: the disk reported an input/output error (the disk or its connection may be failing); nothing was changed. Check the disk and try again.</source>
        <translation>{path} 无法写入或读取：磁盘报告了输入/输出错误（磁盘或其连接可能出现故障）；没有做任何更改。请检查磁盘后重试。</translation>
    </message>
    <message>
        <source>the disk reported an input/output error</source>
        <translation>磁盘报告了输入/输出错误</translation>
    </message>
    <message>
        <source>the file size limit (ulimit -f) was reached</source>
        <translation>已达到文件大小限制（ulimit -f）</translation>
    </message>
    <message>
        <source>A number too large for the database ({error}); nothing was changed.</source>
        <translation>数字太大，数据库无法保存（{error}）；没有做任何更改。</translation>
    </message>
    <message>
        <source>The database {path} failed: {name}: {error}</source>
        <translation>数据库 {path} 出错：{name}：{error}</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>Instructions</source>
        <translation>指令</translation>
    </message>
    <message>
        <source>Project</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Pinned</source>
        <translation>已固定</translation>
    </message>
    <message>
        <source>Messages</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Tool results</source>
        <translation>工具结果</translation>
    </message>
    <message>
        <source>Media</source>
        <translation>媒体</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Reserved for output</source>
        <translation>为输出预留</translation>
    </message>
    <message>
        <source>from the last API response</source>
        <translation>来自上一次 API 响应</translation>
    </message>
    <message>
        <source>estimated (no usable API response yet)</source>
        <translation>估算值（尚无可用的 API 响应）</translation>
    </message>
    <message>
        <source>no data yet</source>
        <translation>尚无数据</translation>
    </message>
    <message>
        <source>normal</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>偏高</translation>
    </message>
    <message>
        <source>critical</source>
        <translation>将满</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>reported by the provider&apos;s API</source>
        <translation>由服务商的 API 报告</translation>
    </message>
    <message>
        <source>the built-in model catalog</source>
        <translation>内置模型目录</translation>
    </message>
    <message>
        <source>learned from a context-overflow error</source>
        <translation>从上下文溢出错误中得知</translation>
    </message>
    <message>
        <source>your override in Settings</source>
        <translation>你在设置中的自定义值</translation>
    </message>
    <message>
        <source>Model        {model}</source>
        <translation>模型         {model}</translation>
    </message>
    <message>
        <source>Window       {window}</source>
        <translation>窗口         {window}</translation>
    </message>
    <message>
        <source>Window       capacity unknown</source>
        <translation>窗口         容量未知</translation>
    </message>
    <message>
        <source>Used         {used} ({pct})</source>
        <translation>已用         {used}（{pct}）</translation>
    </message>
    <message>
        <source>Next turn    ~{next}</source>
        <translation>下一轮       ~{next}</translation>
    </message>
    <message>
        <source>State        {state}</source>
        <translation>状态         {state}</translation>
    </message>
    <message>
        <source>Source       {source}</source>
        <translation>来源         {source}</translation>
    </message>
    <message>
        <source>Window from  {source}</source>
        <translation>窗口来源     {source}</translation>
    </message>
    <message>
        <source>Compacts at  {at} (your cap)</source>
        <translation>压缩阈值     {at}（你设的上限）</translation>
    </message>
    <message>
        <source>Compacts at  {at} ({pct:.0f}% of the input room)</source>
        <translation>压缩阈值     {at}（输入空间的 {pct:.0f}%）</translation>
    </message>
    <message>
        <source>             of which compaction {cost}</source>
        <translation>             其中压缩 {cost}</translation>
    </message>
    <message>
        <source>Last turn $  cache read {read} · cache write {write} · input {input} · output {output}</source>
        <translation>上一轮 $     缓存读取 {read} · 缓存写入 {write} · 输入 {input} · 输出 {output}</translation>
    </message>
    <message>
        <source>             and its compaction {cost}</source>
        <translation>             及其压缩 {cost}</translation>
    </message>
    <message>
        <source>Cold turn    {reason}</source>
        <translation>冷缓存一轮   {reason}</translation>
    </message>
    <message>
        <source>Session $    cache read {read} · cache write {write} · input {input} · output {output}</source>
        <translation>本对话 $     缓存读取 {read} · 缓存写入 {write} · 输入 {input} · 输出 {output}</translation>
    </message>
    <message>
        <source>Last turn    cache read {read} · cache write {write} · input {input} · output {output}</source>
        <translation>上一轮       缓存读取 {read} · 缓存写入 {write} · 输入 {input} · 输出 {output}</translation>
    </message>
    <message>
        <source>Cost         last turn {last} · session {session}</source>
        <translation>费用         上一轮 {last} · 本对话 {session}</translation>
    </message>
    <message>
        <source>Summary      active (1 compaction)</source>
        <translation>摘要         已启用（1 次压缩）</translation>
    </message>
    <message>
        <source>Summary      active ({n} compactions)</source>
        <translation>摘要         已启用（{n} 次压缩）</translation>
    </message>
    <message>
        <source>Auto-compaction paused after 3 consecutive summary failures (Compact now resets it)</source>
        <translation>连续 3 次摘要失败，自动压缩已暂停（“立即压缩”可重置）</translation>
    </message>
    <message>
        <source>Breakdown</source>
        <translation>构成</translation>
    </message>
    <message>
        <source>null</source>
        <translation>空值（null）</translation>
    </message>
    <message>
        <source>a boolean</source>
        <translation>布尔值</translation>
    </message>
    <message>
        <source>a number</source>
        <translation>数字</translation>
    </message>
    <message>
        <source>a string</source>
        <translation>字符串</translation>
    </message>
    <message>
        <source>a list</source>
        <translation>列表</translation>
    </message>
    <message>
        <source>an object</source>
        <translation>对象</translation>
    </message>
    <message>
        <source>the first turn of the chat</source>
        <translation>对话的第一轮</translation>
    </message>
    <message>
        <source>a model switch</source>
        <translation>切换了模型</translation>
    </message>
    <message>
        <source>a re-write after a compaction</source>
        <translation>压缩后重新写入</translation>
    </message>
    <message>
        <source>the cache expired after {minutes} min</source>
        <translation>缓存在 {minutes} 分钟后过期</translation>
    </message>
    <message>
        <source>an edit</source>
        <translation>编辑了消息</translation>
    </message>
</context>
<context>
    <name>ErrorBanner</name>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Compact and retry</source>
        <translation>压缩后重试</translation>
    </message>
    <message>
        <source>New chat from summary</source>
        <translation>用摘要开始新对话</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>FindBar</name>
    <message>
        <source>Find in this chat</source>
        <translation>在此对话中查找</translation>
    </message>
    <message>
        <source>Previous match (Shift+Enter)</source>
        <translation>上一个匹配（Shift+Enter）</translation>
    </message>
    <message>
        <source>Previous match</source>
        <translation>上一个匹配</translation>
    </message>
    <message>
        <source>Next match (Enter)</source>
        <translation>下一个匹配（Enter）</translation>
    </message>
    <message>
        <source>Next match</source>
        <translation>下一个匹配</translation>
    </message>
    <message>
        <source>Close (Esc)</source>
        <translation>关闭（Esc）</translation>
    </message>
    <message>
        <source>Close the find bar</source>
        <translation>关闭查找栏</translation>
    </message>
    <message>
        <source>No results</source>
        <translation>无结果</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>第 %1 个，共 %2 个</translation>
    </message>
</context>
<context>
    <name>HoverCard</name>
    <message>
        <source>Context details</source>
        <translation>上下文详情</translation>
    </message>
    <message>
        <source>Context window</source>
        <translation>上下文窗口</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>窗口</translation>
    </message>
    <message>
        <source>Window size from</source>
        <translation>窗口大小来源</translation>
    </message>
    <message>
        <source>Used</source>
        <translation>已用</translation>
    </message>
    <message>
        <source>Usage</source>
        <translation>使用率</translation>
    </message>
    <message>
        <source>Next turn (est.)</source>
        <translation>下一轮（估计）</translation>
    </message>
    <message>
        <source>Cache read</source>
        <translation>缓存读取</translation>
    </message>
    <message>
        <source>Cache creation</source>
        <translation>缓存写入</translation>
    </message>
    <message>
        <source>Output tokens</source>
        <translation>输出词元</translation>
    </message>
    <message>
        <source>Cost, last turn</source>
        <translation>费用（上一轮）</translation>
    </message>
    <message>
        <source>Cost, session</source>
        <translation>费用（本对话）</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Context breakdown</source>
        <translation>上下文构成</translation>
    </message>
    <message>
        <source>Compact now</source>
        <translation>立即压缩</translation>
    </message>
    <message>
        <source>capacity unknown</source>
        <translation>容量未知</translation>
    </message>
    <message>
        <source>the provider&apos;s API</source>
        <translation>服务商的 API</translation>
    </message>
    <message>
        <source>the model catalog</source>
        <translation>模型目录</translation>
    </message>
    <message>
        <source>an overflow error</source>
        <translation>溢出错误</translation>
    </message>
    <message>
        <source>your override</source>
        <translation>你的自定义值</translation>
    </message>
    <message>
        <source>PRECIS_CONTEXT_WINDOW</source>
        <translation>PRECIS_CONTEXT_WINDOW</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>Where Précis got this model&apos;s context window size: reported by the provider&apos;s models API, the built-in catalog, learned from a context-overflow error, an override in Settings, or the PRECIS_CONTEXT_WINDOW variable</source>
        <translation>Précis 从何处得知此模型的上下文窗口大小：服务商的模型 API 报告、内置目录、从上下文溢出错误中得知、设置中的自定义值，或 PRECIS_CONTEXT_WINDOW 变量</translation>
    </message>
    <message>
        <source>Automatic compaction starts here (the tick on the ring): the percent of the input room (the window less the output reserve) set in Settings</source>
        <translation>自动压缩从这里开始（圆环上的刻度）：即设置中设定的输入空间（窗口减去输出预留）百分比</translation>
    </message>
    <message>
        <source>{n} tokens</source>
        <translation>{n} 词元</translation>
    </message>
    <message>
        <source>{total} (compaction {part})</source>
        <translation>{total}（压缩 {part}）</translation>
    </message>
    <message>
        <source>Active · 1 compaction</source>
        <translation>已启用 · 1 次压缩</translation>
    </message>
    <message>
        <source>Active · {n} compactions</source>
        <translation>已启用 · {n} 次压缩</translation>
    </message>
    <message>
        <source>Active</source>
        <translation>已启用</translation>
    </message>
    <message>
        <source>Auto-compaction paused after 3 failures</source>
        <translation>连续失败 3 次，自动压缩已暂停</translation>
    </message>
    <message>
        <source>Context is getting full: Précis will compact soon</source>
        <translation>上下文快满了：Précis 即将压缩</translation>
    </message>
    <message>
        <source>Context almost full: the next turn will be compacted first</source>
        <translation>上下文几乎已满：下一轮会先压缩</translation>
    </message>
    <message>
        <source>From the last API response</source>
        <translation>来自上一次 API 响应</translation>
    </message>
    <message>
        <source>Estimated (no comparable API response yet)</source>
        <translation>估算值（尚无可参照的 API 响应）</translation>
    </message>
    <message>
        <source>No context usage data yet</source>
        <translation>尚无上下文用量数据</translation>
    </message>
    <message>
        <source>Summarise older messages now to free up context</source>
        <translation>立即摘要较早的消息以腾出上下文</translation>
    </message>
    <message>
        <source>Nothing to compact yet</source>
        <translation>暂无可压缩的内容</translation>
    </message>
    <message>
        <source>Compacts at</source>
        <translation>压缩阈值</translation>
    </message>
    <message>
        <source>Cache expires in</source>
        <translation>缓存剩余时间</translation>
    </message>
    <message>
        <source>Warm / cold turn</source>
        <translation>热 / 冷缓存一轮</translation>
    </message>
    <message>
        <source>your cap</source>
        <translation>你设的上限</translation>
    </message>
    <message>
        <source>expired (cold)</source>
        <translation>已过期（冷）</translation>
    </message>
    <message>
        <source>1 h cache</source>
        <translation>1 小时缓存</translation>
    </message>
    <message>
        <source>5 min cache</source>
        <translation>5 分钟缓存</translation>
    </message>
    <message>
        <source>Cache reads $</source>
        <translation>缓存读取 $</translation>
    </message>
    <message>
        <source>Cache writes $</source>
        <translation>缓存写入 $</translation>
    </message>
    <message>
        <source>Uncached input $</source>
        <translation>未缓存输入 $</translation>
    </message>
    <message>
        <source>Output $</source>
        <translation>输出 $</translation>
    </message>
    <message>
        <source>Cold turn</source>
        <translation>冷缓存一轮</translation>
    </message>
    <message>
        <source>What the last turn cost / what this chat has cost, by kind</source>
        <translation>上一轮的费用 / 此对话的累计费用，按类别</translation>
    </message>
    <message>
        <source>cache expired after {n} min</source>
        <translation>缓存在 {n} 分钟后过期</translation>
    </message>
    <message>
        <source>first turn of the chat</source>
        <translation>对话的第一轮</translation>
    </message>
    <message>
        <source>model switch</source>
        <translation>切换了模型</translation>
    </message>
    <message>
        <source>re-write after a compaction</source>
        <translation>压缩后重新写入</translation>
    </message>
    <message>
        <source>an edit</source>
        <translation>编辑了消息</translation>
    </message>
</context>
<context>
    <name>KeyValueRows</name>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>value (kept in the keyring)</source>
        <translation>值（保存在密钥环中）</translation>
    </message>
    <message>
        <source>Value of {name}</source>
        <translation>{name} 的值</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
</context>
<context>
    <name>LanguageBox</name>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Applies at the next start</source>
        <translation>下次启动时生效</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>The model this chat uses (stored with the chat)</source>
        <translation>此对话使用的模型（随对话保存）</translation>
    </message>
    <message>
        <source>Model of this chat</source>
        <translation>此对话的模型</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;New chat</source>
        <translation>新建对话(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Import Claude Code session…</source>
        <translation>导入 Claude Code 会话(&amp;I)…</translation>
    </message>
    <message>
        <source>&amp;Rename chat…</source>
        <translation>重命名对话(&amp;R)…</translation>
    </message>
    <message>
        <source>&amp;Clear history of this chat…</source>
        <translation>清空此对话的历史(&amp;C)…</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>No API key: your chats can be read; to send, add a key in Settings.</source>
        <translation>没有 API 密钥：可以阅读对话；要发送消息，请在设置中添加密钥。</translation>
    </message>
    <message>
        <source>Editing a message: sending adds a new version; the earlier one stays (‹ › under the message). Esc cancels.</source>
        <translation>正在编辑消息：发送后会添加一个新版本；之前的版本仍保留（在消息下方用 ‹ › 切换）。按 Esc 取消。</translation>
    </message>
    <message>
        <source>Editing: sending adds a new version of the message</source>
        <translation>编辑中：发送后会为这条消息添加一个新版本</translation>
    </message>
    <message>
        <source>Versions can be switched when the reply has finished.</source>
        <translation>回复结束后才能切换版本。</translation>
    </message>
    <message>
        <source>Delete message</source>
        <translation>删除消息</translation>
    </message>
    <message>
        <source>Delete this message?</source>
        <translation>删除这条消息？</translation>
    </message>
    <message>
        <source>Clear history</source>
        <translation>清空历史</translation>
    </message>
    <message>
        <source>Delete every message and summary of this chat? The chat itself stays.</source>
        <translation>删除此对话的所有消息和摘要？对话本身会保留。</translation>
    </message>
    <message>
        <source>Import Claude Code session</source>
        <translation>导入 Claude Code 会话</translation>
    </message>
    <message>
        <source>Claude Code sessions (*.jsonl);;All files (*)</source>
        <translation>Claude Code 会话 (*.jsonl);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Importing %s…</source>
        <translation>正在导入 %s…</translation>
    </message>
    <message>
        <source>Import failed: %s</source>
        <translation>导入失败：%s</translation>
    </message>
    <message>
        <source>The model can change when the reply has finished.</source>
        <translation>回复结束后才能更换模型。</translation>
    </message>
    <message>
        <source>This chat now uses %s.</source>
        <translation>此对话现在使用 %s。</translation>
    </message>
    <message>
        <source>The profile can change when the reply has finished.</source>
        <translation>回复完成后才能更改配置。</translation>
    </message>
    <message>
        <source>This chat now uses the profile “{name}”.</source>
        <translation>此对话现在使用配置“{name}”。</translation>
    </message>
    <message>
        <source>The language applies at the next start of Précis.</source>
        <translation>语言将在下次启动 Précis 时生效。</translation>
    </message>
    <message>
        <source>%s · %s tokens</source>
        <translation>%s · %s 词元</translation>
    </message>
    <message>
        <source>New chat from the summary: edit it in the composer, then send.</source>
        <translation>已用摘要新建对话：请在输入框中修改后发送。</translation>
    </message>
</context>
<context>
    <name>Markdown</name>
    <message>
        <source>[image: {alt}]</source>
        <translation>[图片：{alt}]</translation>
    </message>
    <message>
        <source>code</source>
        <translation>代码</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
</context>
<context>
    <name>McpDialog</name>
    <message>
        <source>MCP servers and tool permissions</source>
        <translation>MCP 服务器与工具权限</translation>
    </message>
</context>
<context>
    <name>McpPage</name>
    <message>
        <source>disabled</source>
        <translation>已停用</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>启动中</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>{n} tools: {names}</source>
        <translation>{n} 个工具：{names}</translation>
    </message>
    <message>
        <source>MCP servers (check to enable)</source>
        <translation>MCP 服务器（勾选以启用）</translation>
    </message>
    <message>
        <source>A&amp;dd…</source>
        <translation>添加(&amp;D)…</translation>
    </message>
    <message>
        <source>&amp;Edit…</source>
        <translation>编辑(&amp;E)…</translation>
    </message>
    <message>
        <source>Re&amp;move</source>
        <translation>移除(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Restart</source>
        <translation>重新启动(&amp;R)</translation>
    </message>
    <message>
        <source>Re&amp;fresh</source>
        <translation>刷新(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Import from Claude Desktop</source>
        <translation>从 Claude Desktop 导入(&amp;I)</translation>
    </message>
    <message>
        <source>Server log (stderr)</source>
        <translation>服务器日志（stderr）</translation>
    </message>
    <message>
        <source>Re&amp;voke</source>
        <translation>撤销授权(&amp;V)</translation>
    </message>
    <message>
        <source>Servers come from mcp.json in the config folder ({&quot;mcpServers&quot;: …}), or from Claude Desktop&apos;s configuration. Check a server to enable it.</source>
        <translation>服务器来自配置文件夹中的 mcp.json（{&quot;mcpServers&quot;: …}），或来自 Claude Desktop 的配置。勾选服务器即可启用。</translation>
    </message>
    <message>
        <source>&lt;b&gt;MCP servers&lt;/b&gt;</source>
        <translation>&lt;b&gt;MCP 服务器&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Log of the selected server</source>
        <translation>所选服务器的日志</translation>
    </message>
    <message>
        <source>&lt;b&gt;Saved approvals&lt;/b&gt; (&quot;Always for this tool&quot; and &quot;Allow for this chat&quot;)</source>
        <translation>&lt;b&gt;已保存的授权&lt;/b&gt;（“此工具始终允许”和“在此对话中允许”）</translation>
    </message>
    <message>
        <source>Saved {name}</source>
        <translation>已保存 {name}</translation>
    </message>
    <message>
        <source>Removed {name}</source>
        <translation>已移除 {name}</translation>
    </message>
    <message>
        <source>{tool}  ({server}, origin {origin}) — always</source>
        <translation>{tool}  （{server}，来源 {origin}）—— 始终允许</translation>
    </message>
    <message>
        <source>{tool}  ({server}) — for the chat “{title}”</source>
        <translation>{tool}  （{server}）—— 用于对话“{title}”</translation>
    </message>
    <message>
        <source>chat {id}</source>
        <translation>对话 {id}</translation>
    </message>
    <message>
        <source>built-in</source>
        <translation>内置</translation>
    </message>
</context>
<context>
    <name>McpServerForm</name>
    <message>
        <source>Edit the MCP server “{name}”</source>
        <translation>编辑 MCP 服务器“{name}”</translation>
    </message>
    <message>
        <source>Add an MCP server</source>
        <translation>添加 MCP 服务器</translation>
    </message>
    <message>
        <source>Local program (stdio)</source>
        <translation>本地程序（stdio）</translation>
    </message>
    <message>
        <source>Remote (streamable HTTP)</source>
        <translation>远程（可流式 HTTP）</translation>
    </message>
    <message>
        <source>e.g. npx or /usr/bin/python3</source>
        <translation>例如 npx 或 /usr/bin/python3</translation>
    </message>
    <message>
        <source>arguments, quoted as in a shell</source>
        <translation>参数，按 shell 的方式加引号</translation>
    </message>
    <message>
        <source>optional</source>
        <translation>可选</translation>
    </message>
    <message>
        <source>variable</source>
        <translation>变量</translation>
    </message>
    <message>
        <source>https://example.com/mcp</source>
        <translation>https://example.com/mcp</translation>
    </message>
    <message>
        <source>header</source>
        <translation>请求头</translation>
    </message>
    <message>
        <source>&amp;Name</source>
        <translation>名称(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Type</source>
        <translation>类型(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Command</source>
        <translation>命令(&amp;C)</translation>
    </message>
    <message>
        <source>A&amp;rguments</source>
        <translation>参数(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Working folder</source>
        <translation>工作文件夹(&amp;W)</translation>
    </message>
    <message>
        <source>&amp;Environment</source>
        <translation>环境变量(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;URL</source>
        <translation>URL(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Headers</source>
        <translation>请求头(&amp;H)</translation>
    </message>
    <message>
        <source>Give the server a name.</source>
        <translation>请给服务器起个名字。</translation>
    </message>
    <message>
        <source>A server named “{name}” already exists.</source>
        <translation>已经有名为“{name}”的服务器了。</translation>
    </message>
    <message>
        <source>The URL must start with http:// or https:// and name a host.</source>
        <translation>URL 必须以 http:// 或 https:// 开头并包含主机名。</translation>
    </message>
    <message>
        <source>“{name}” is not a valid header name.</source>
        <translation>“{name}”不是有效的请求头名称。</translation>
    </message>
    <message>
        <source>A stdio server needs a command to start.</source>
        <translation>stdio 服务器需要一个启动命令。</translation>
    </message>
    <message>
        <source>The arguments cannot be read ({reason}).</source>
        <translation>无法解析参数（{reason}）。</translation>
    </message>
    <message>
        <source>The working folder does not exist: {folder}</source>
        <translation>工作文件夹不存在：{folder}</translation>
    </message>
    <message>
        <source>“{name}” is not a valid environment variable name.</source>
        <translation>“{name}”不是有效的环境变量名。</translation>
    </message>
</context>
<context>
    <name>MemoryUi</name>
    <message>
        <source>&amp;Pinned messages…</source>
        <translation>固定的消息(&amp;P)…</translation>
    </message>
    <message>
        <source>Search &amp;earlier in this chat…</source>
        <translation>搜索此对话的较早内容(&amp;E)…</translation>
    </message>
    <message>
        <source>Pinned: the selected part stays verbatim beside every summary.</source>
        <translation>已固定：所选部分会在每份摘要旁保留原文。</translation>
    </message>
    <message>
        <source>Pinned: it stays verbatim beside every summary.</source>
        <translation>已固定：它会在每份摘要旁保留原文。</translation>
    </message>
    <message>
        <source>Unpinned.</source>
        <translation>已取消固定。</translation>
    </message>
    <message>
        <source>Search earlier in this chat</source>
        <translation>搜索此对话的较早内容</translation>
    </message>
    <message>
        <source>Words from this chat, summarised messages included…</source>
        <translation>此对话中的词语，包括已摘要的消息…</translation>
    </message>
</context>
<context>
    <name>MessageActions</name>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the message</source>
        <translation>复制这条消息</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Edit and resend the message</source>
        <translation>编辑并重新发送这条消息</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <source>Ask for another reply</source>
        <translation>请求另一个回复</translation>
    </message>
    <message>
        <source>Pin</source>
        <translation>固定</translation>
    </message>
    <message>
        <source>Keep the message (or the selected part) verbatim beside every summary</source>
        <translation>在每份摘要旁保留这条消息（或所选部分）的原文</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>取消固定</translation>
    </message>
    <message>
        <source>Stop keeping this message verbatim beside the summary</source>
        <translation>不再在摘要旁保留这条消息的原文</translation>
    </message>
</context>
<context>
    <name>OrganiseUi</name>
    <message>
        <source>Instructions</source>
        <translation>指令</translation>
    </message>
    <message>
        <source>Instructions for this chat (sent with every request)</source>
        <translation>此对话的指令（随每次请求发送）</translation>
    </message>
    <message>
        <source>Chat instructions</source>
        <translation>对话指令</translation>
    </message>
    <message>
        <source>&amp;Search all chats…</source>
        <translation>搜索所有对话(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Export chat…</source>
        <translation>导出对话(&amp;E)…</translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Instructions…</source>
        <translation>指令(&amp;I)…</translation>
    </message>
    <message>
        <source>Copy the last &amp;reply</source>
        <translation>复制最后一条回复(&amp;R)</translation>
    </message>
    <message>
        <source>Copy chat as &amp;Markdown</source>
        <translation>将对话复制为 Markdown(&amp;M)</translation>
    </message>
    <message>
        <source>Copy chat as &amp;JSON</source>
        <translation>将对话复制为 JSON(&amp;J)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>That chat no longer exists.</source>
        <translation>该对话已不存在。</translation>
    </message>
    <message>
        <source>That message is in another version: it can be shown when the reply has finished.</source>
        <translation>该消息位于另一个版本中：回复结束后即可显示。</translation>
    </message>
    <message>
        <source>That message no longer exists.</source>
        <translation>该消息已不存在。</translation>
    </message>
    <message>
        <source>This chat&apos;s instructions were saved.</source>
        <translation>此对话的指令已保存。</translation>
    </message>
    <message>
        <source>This chat has no instructions of its own now.</source>
        <translation>此对话现在没有自己的指令。</translation>
    </message>
    <message>
        <source>Export chat</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Cannot write {path}: {reason}</source>
        <translation>无法写入 {path}：{reason}</translation>
    </message>
    <message>
        <source>Exported to {path}</source>
        <translation>已导出到 {path}</translation>
    </message>
    <message>
        <source>Copied the whole chat</source>
        <translation>已复制整个对话</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <source>No reply to copy yet</source>
        <translation>还没有可复制的回复</translation>
    </message>
</context>
<context>
    <name>PermissionPrompt</name>
    <message>
        <source>Arguments of the tool call</source>
        <translation>工具调用的参数</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>允许一次</translation>
    </message>
    <message>
        <source>Allow for this chat</source>
        <translation>在此对话中允许</translation>
    </message>
    <message>
        <source>Always for this tool…</source>
        <translation>始终允许此工具…</translation>
    </message>
    <message>
        <source>Yes, always allow it</source>
        <translation>是，始终允许</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>Allow this tool in every chat from now on, without asking?</source>
        <translation>从现在起在所有对话中允许此工具，不再询问？</translation>
    </message>
    <message>
        <source>Asks to confirm first</source>
        <translation>会先请你确认</translation>
    </message>
    <message>
        <source>command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>网址</translation>
    </message>
    <message>
        <source>headers</source>
        <translation>请求头</translation>
    </message>
    <message>
        <source>definition</source>
        <translation>定义</translation>
    </message>
    <message>
        <source>This server changed since you allowed it (its {parts}): the approval given then does not cover it.</source>
        <translation>此服务器在你允许之后已更改（{parts}）：当时的批准不再适用。</translation>
    </message>
    <message>
        <source>This command asks for the network: it could reach the internet, your local network and the services listening on this machine (the display, the session bus, agents&apos; sockets).</source>
        <translation>此命令要求使用网络：它可以访问互联网、你的局域网，以及本机上正在监听的服务（显示服务、会话总线、各类代理的套接字）。</translation>
    </message>
    <message>
        <source>built-in</source>
        <translation>内置</translation>
    </message>
    <message>
        <source>&lt;b&gt;{tool}&lt;/b&gt; ({server}) wants to run. Allow it?</source>
        <translation>&lt;b&gt;{tool}&lt;/b&gt;（{server}）请求运行。是否允许？</translation>
    </message>
    <message>
        <source>(no diff: the file cannot be read or the text is not in it)</source>
        <translation>（无差异对比：无法读取该文件，或文件中没有这段文本）</translation>
    </message>
</context>
<context>
    <name>PinsDialog</name>
    <message>
        <source>Pinned messages</source>
        <translation>固定的消息</translation>
    </message>
    <message>
        <source>Pinned messages stay verbatim beside every summary of this chat.</source>
        <translation>固定的消息会在此对话的每份摘要旁保留原文。</translation>
    </message>
    <message>
        <source>Nothing is pinned. Pin a message from its actions (hover it).</source>
        <translation>没有固定任何消息。可在消息的操作中固定它（将鼠标悬停在消息上）。</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>取消固定</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <source>selected part</source>
        <translation>所选部分</translation>
    </message>
</context>
<context>
    <name>ProjectPage</name>
    <message>
        <source>Project settings</source>
        <translation>项目设置</translation>
    </message>
    <message>
        <source>Project name</source>
        <translation>项目名称</translation>
    </message>
    <message>
        <source>What every chat of this project keeps to, e.g. “Answer in British English.”</source>
        <translation>此项目中每个对话都遵循的要求，例如“用英式英语回答。”</translation>
    </message>
    <message>
        <source>Project instructions</source>
        <translation>项目指令</translation>
    </message>
    <message>
        <source>Profile of a new chat</source>
        <translation>新对话的配置</translation>
    </message>
    <message>
        <source>The active profile</source>
        <translation>当前使用的配置</translation>
    </message>
    <message>
        <source>Model of a new chat</source>
        <translation>新对话的模型</translation>
    </message>
    <message>
        <source>The profile&apos;s model</source>
        <translation>配置自带的模型</translation>
    </message>
    <message>
        <source>None: no workspace, no tools</source>
        <translation>无：没有工作区，没有工具</translation>
    </message>
    <message>
        <source>Workspace folder of a new chat</source>
        <translation>新对话的工作区文件夹</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <source>Choose the workspace folder</source>
        <translation>选择工作区文件夹</translation>
    </message>
    <message>
        <source>Recall across this project</source>
        <translation>在整个项目中回溯检索</translation>
    </message>
    <message>
        <source>The recall tool of its chats also searches this project&apos;s knowledge and its other chats.</source>
        <translation>其对话的回溯检索工具也会搜索此项目的知识和项目中的其他对话。</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <source>Instructions:</source>
        <translation>指令：</translation>
    </message>
    <message>
        <source>A new chat of this project</source>
        <translation>此项目中的新对话</translation>
    </message>
    <message>
        <source>Profile:</source>
        <translation>配置：</translation>
    </message>
    <message>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Workspace:</source>
        <translation>工作区：</translation>
    </message>
    <message>
        <source>Knowledge</source>
        <translation>知识</translation>
    </message>
    <message>
        <source>Knowledge of the project</source>
        <translation>项目的知识</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>In requests</source>
        <translation>请求中</translation>
    </message>
    <message>
        <source>Add files…</source>
        <translation>添加文件…</translation>
    </message>
    <message>
        <source>Add text…</source>
        <translation>添加文本…</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>New chat in this project</source>
        <translation>在此项目中新建对话</translation>
    </message>
    <message>
        <source>Delete project…</source>
        <translation>删除项目…</translation>
    </message>
    <message>
        <source>Workspace of a new chat</source>
        <translation>新对话的工作区</translation>
    </message>
    <message>
        <source>A project needs a name.</source>
        <translation>项目需要一个名称。</translation>
    </message>
    <message>
        <source>{folder} is not a folder.</source>
        <translation>{folder} 不是文件夹。</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>{count} character(s)</source>
        <translation>{count} 个字符</translation>
    </message>
    <message>
        <source>Inlined</source>
        <translation>内联</translation>
    </message>
    <message>
        <source>Searchable</source>
        <translation>可检索</translation>
    </message>
    <message>
        <source>Sent whole with every request of the project&apos;s chats.</source>
        <translation>随项目中对话的每个请求完整发送。</translation>
    </message>
    <message>
        <source>Too large for the project&apos;s share of the window: the model finds it with recall.</source>
        <translation>超出项目在上下文窗口中的份额：模型通过回溯检索找到它。</translation>
    </message>
    <message>
        <source>No knowledge yet: add text files or pasted text every chat of the project should know.</source>
        <translation>还没有知识：添加项目中每个对话都应知道的文本文件或粘贴的文本。</translation>
    </message>
    <message>
        <source>About {tokens} tokens of the project go with every request on {model}; searchable pieces are found with recall.</source>
        <translation>在 {model} 上，每个请求约携带项目的 {tokens} 词元；可检索的部分通过回溯检索找到。</translation>
    </message>
    <message>
        <source>Add files to the project</source>
        <translation>向项目添加文件</translation>
    </message>
    <message>
        <source>Text files (*)</source>
        <translation>文本文件 (*)</translation>
    </message>
    <message numerus="yes">
        <source>(%n more file(s) refused.)</source>
        <translation>
            <numerusform>（另有 %n 个文件被拒绝。）</numerusform>
        </translation>
    </message>
    <message>
        <source>Pasted text</source>
        <translation>粘贴的文本</translation>
    </message>
</context>
<context>
    <name>ProjectsUi</name>
    <message>
        <source>New &amp;project…</source>
        <translation>新建项目(&amp;P)…</translation>
    </message>
    <message>
        <source>Pro&amp;jects</source>
        <translation>项目(&amp;J)</translation>
    </message>
    <message>
        <source>No projects yet</source>
        <translation>还没有项目</translation>
    </message>
    <message>
        <source>New project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <source>Name of the project:</source>
        <translation>项目名称：</translation>
    </message>
    <message>
        <source>Create</source>
        <translation>创建</translation>
    </message>
    <message>
        <source>A project needs a name.</source>
        <translation>项目需要一个名称。</translation>
    </message>
    <message>
        <source>Moved to the project “{name}”.</source>
        <translation>已移入项目“{name}”。</translation>
    </message>
    <message>
        <source>Moved out of the project.</source>
        <translation>已移出项目。</translation>
    </message>
    <message>
        <source>Delete project</source>
        <translation>删除项目</translation>
    </message>
    <message>
        <source>Delete the project “{name}”?</source>
        <translation>删除项目“{name}”？</translation>
    </message>
    <message numerus="yes">
        <source>Its instructions and knowledge go with it. Its %n chat(s) can stay, outside any project, or be deleted too.</source>
        <translation>
            <numerusform>其指令和知识将一并删除。其 %n 个对话可以保留（不属于任何项目），也可以一并删除。</numerusform>
        </translation>
    </message>
    <message>
        <source>Keep the chats</source>
        <translation>保留对话</translation>
    </message>
    <message>
        <source>Delete the chats too</source>
        <translation>同时删除对话</translation>
    </message>
    <message>
        <source>Its instructions and knowledge go with it. It has no chats.</source>
        <translation>其指令和知识将一并删除。它没有对话。</translation>
    </message>
    <message numerus="yes">
        <source>Deleted the project “{name}” and its %n chat(s).</source>
        <translation>
            <numerusform>已删除项目“{name}”及其 %n 个对话。</numerusform>
        </translation>
    </message>
    <message>
        <source>Deleted the project “{name}”; its chats were kept.</source>
        <translation>已删除项目“{name}”；其对话已保留。</translation>
    </message>
</context>
<context>
    <name>ProviderForm</name>
    <message>
        <source>Provider profile</source>
        <translation>服务商配置</translation>
    </message>
    <message>
        <source>https://api.anthropic.com (default)</source>
        <translation>https://api.anthropic.com（默认）</translation>
    </message>
    <message>
        <source>used for summaries; empty = the chat model</source>
        <translation>用于生成摘要；留空则使用对话模型</translation>
    </message>
    <message>
        <source>Tokens a chat with Thinking on lets the model think (kept below the max output tokens)</source>
        <translation>开启“思考”的对话允许模型用于思考的词元数（保持在最大输出词元数以下）</translation>
    </message>
    <message>
        <source>from the provider or the catalog</source>
        <translation>来自服务商或内置目录</translation>
    </message>
    <message>
        <source> / M tokens</source>
        <translation> / 百万词元</translation>
    </message>
    <message>
        <source>from the catalog</source>
        <translation>来自内置目录</translation>
    </message>
    <message>
        <source>Keep the prompt cache for an hour (turn off if the provider rejects it)</source>
        <translation>提示缓存保留一小时（如服务商不支持请关闭）</translation>
    </message>
    <message>
        <source>A chat&apos;s requests use the hour-long cache once it has paused between 5 minutes and an hour (the cheaper 5-minute cache lapses in such a pause); until then they use the 5-minute one. A change applies from the next request; the hover card&apos;s cache row shows which one the last request bought.</source>
        <translation>对话暂停 5 分钟到 1 小时之后，其请求会使用 1 小时缓存（这样的暂停会让较便宜的 5 分钟缓存失效）；在此之前使用 5 分钟缓存。更改从下一次请求起生效；悬停卡片的缓存一行会显示上一次请求使用的是哪一种。</translation>
    </message>
    <message>
        <source>Let a request cross a model&apos;s price cliff</source>
        <translation>允许请求越过模型的价格阶梯</translation>
    </message>
    <message>
        <source>Let a request cross a model&apos;s price cliff (e.g. claude-haiku-5-5 above 100K tokens costs 5x); off, the chat compacts before it</source>
        <translation>允许请求越过模型的价格阶梯（例如 claude-haiku-5-5 超过 100K 词元时价格为 5 倍）；关闭时，对话会在越过之前压缩</translation>
    </message>
    <message>
        <source>Prices as of %1; edit %2 to update them.</source>
        <translation>价格截至 %1；如需更新，请编辑 %2。</translation>
    </message>
    <message>
        <source>Keep the key in a private file (readable by you only)</source>
        <translation>将密钥保存在私有文件中（仅你可读）</translation>
    </message>
    <message>
        <source>A file in the config folder that only your user can read: this system has no keyring</source>
        <translation>配置文件夹中仅你的用户可读的文件：此系统没有密钥环</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>外观</translation>
    </message>
    <message>
        <source>set by ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN</source>
        <translation>由 ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN 设置</translation>
    </message>
    <message>
        <source>saved in the system keyring (type to replace)</source>
        <translation>已保存在系统密钥环中（输入新值即可替换）</translation>
    </message>
    <message>
        <source>kept for this run only (type to replace)</source>
        <translation>仅在本次运行中使用（输入新值即可替换）</translation>
    </message>
    <message>
        <source>saved in a private file (type to replace)</source>
        <translation>已保存在私有文件中（输入新值即可替换）</translation>
    </message>
    <message>
        <source>Use the key for this run only (not saved)</source>
        <translation>仅在本次运行中使用此密钥（不保存）</translation>
    </message>
    <message>
        <source>This system has no keyring, so the key is kept in a file in the config folder that only your user can read (mode 0600). Untick it to use the key for this run only: it is then not saved.</source>
        <translation>此系统没有密钥环，因此密钥保存在配置文件夹中只有你的用户可读的文件里（权限 0600）。取消勾选则仅在本次运行中使用密钥，不会保存。</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>Send one tiny request and report the models, the window and the key</source>
        <translation>发送一个极小的请求，报告可用模型、上下文窗口和密钥是否有效</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>A new profile from a provider&apos;s preset, or Custom for any other Anthropic-compatible endpoint</source>
        <translation>根据服务商预设新建配置，或选择“自定义”以使用其他兼容 Anthropic 的端点</translation>
    </message>
    <message>
        <source>Custom (any Anthropic-compatible endpoint)</source>
        <translation>自定义（任何兼容 Anthropic 的端点）</translation>
    </message>
    <message>
        <source>Duplicate</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>A copy of this profile without its key (the menu copies the key too)</source>
        <translation>复制此配置但不含密钥（菜单中可连同密钥一起复制）</translation>
    </message>
    <message>
        <source>Duplicate without the key</source>
        <translation>复制（不含密钥）</translation>
    </message>
    <message>
        <source>Duplicate with the key</source>
        <translation>复制（含密钥）</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Profile</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>基础 URL</translation>
    </message>
    <message>
        <source>Authentication</source>
        <translation>认证方式</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Small model</source>
        <translation>小模型</translation>
    </message>
    <message>
        <source>Max output tokens</source>
        <translation>最大输出词元数</translation>
    </message>
    <message>
        <source>Thinking budget</source>
        <translation>思考预算</translation>
    </message>
    <message>
        <source>Context window</source>
        <translation>上下文窗口</translation>
    </message>
    <message>
        <source>Prices (in, out)</source>
        <translation>价格（输入，输出）</translation>
    </message>
    <message>
        <source>Context and cost</source>
        <translation>上下文与费用</translation>
    </message>
    <message>
        <source>Compact at</source>
        <translation>压缩阈值</translation>
    </message>
    <message>
        <source>the key of “{name}” is copied when you save (type to replace)</source>
        <translation>保存时复制“{name}”的密钥（输入新值即可替换）</translation>
    </message>
    <message>
        <source>empty: this profile keeps its saved key, if it has one</source>
        <translation>留空：此配置保留其已保存的密钥（如果有）</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Delete this profile and its saved key</source>
        <translation>删除此配置及其保存的密钥</translation>
    </message>
    <message>
        <source>Delete the profile “%1”? Its saved key is removed from this computer.</source>
        <translation>删除配置“%1”？它保存的密钥将从这台电脑上移除。</translation>
    </message>
    <message numerus="yes">
        <source>This profile is used by %n chat(s): they keep their messages and continue on “%1” (the profile in use when you save) with its model.</source>
        <translation>
            <numerusform>有 %n 个对话使用此配置：它们会保留消息，并改用“%1”（保存时正在使用的配置）及其模型继续。</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete profile</source>
        <translation>删除配置</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Set by %s for this run; not saved</source>
        <translation>本次运行由 %s 设置；不会保存</translation>
    </message>
    <message>
        <source>%s overrides this profile for this run only; it is never saved.</source>
        <translation>%s 仅在本次运行中覆盖此配置；它不会被保存。</translation>
    </message>
    <message>
        <source>%s override this profile for this run only; they are never saved.</source>
        <translation>%s 仅在本次运行中覆盖此配置；它们不会被保存。</translation>
    </message>
</context>
<context>
    <name>ReadingUi</name>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
</context>
<context>
    <name>SearchDialog</name>
    <message>
        <source>Search all chats</source>
        <translation>搜索所有对话</translation>
    </message>
    <message>
        <source>Search messages, tool results and summaries…</source>
        <translation>搜索消息、工具结果和摘要…</translation>
    </message>
    <message>
        <source>Search results</source>
        <translation>搜索结果</translation>
    </message>
    <message>
        <source>No results</source>
        <translation>无结果</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>助手</translation>
    </message>
    <message>
        <source>Tool result</source>
        <translation>工具结果</translation>
    </message>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>No results for “{query}”</source>
        <translation>没有“{query}”的结果</translation>
    </message>
</context>
<context>
    <name>SessionGroups</name>
    <message>
        <source>Pinned</source>
        <translation>已置顶</translation>
    </message>
    <message>
        <source>Today</source>
        <translation>今天</translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>昨天</translation>
    </message>
    <message>
        <source>Previous 7 days</source>
        <translation>过去 7 天</translation>
    </message>
    <message>
        <source>Previous 30 days</source>
        <translation>过去 30 天</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Settings · Provider profiles</source>
        <translation>设置 · 服务商配置</translation>
    </message>
    <message>
        <source>Same as the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
</context>
<context>
    <name>Shortcuts</name>
    <message>
        <source>Search all chats</source>
        <translation>搜索所有对话</translation>
    </message>
    <message>
        <source>Find in this chat</source>
        <translation>在此对话中查找</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新建对话</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Copy the last reply</source>
        <translation>复制最后一条回复</translation>
    </message>
    <message>
        <source>Stop the reply, or cancel an edit</source>
        <translation>停止回复，或取消编辑</translation>
    </message>
    <message>
        <source>in the composer</source>
        <translation>在输入框中</translation>
    </message>
    <message>
        <source>Edit your last message</source>
        <translation>编辑你的最后一条消息</translation>
    </message>
    <message>
        <source>in an empty composer</source>
        <translation>在空的输入框中</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>New line</source>
        <translation>换行</translation>
    </message>
    <message>
        <source>Commands: /help /clear /model /compact /context</source>
        <translation>命令：/help /clear /model /compact /context</translation>
    </message>
    <message>
        <source>at the start of the composer</source>
        <translation>在输入框开头</translation>
    </message>
    <message>
        <source>Rename the chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Next chat in the list</source>
        <translation>列表中的下一个对话</translation>
    </message>
    <message>
        <source>Previous chat in the list</source>
        <translation>列表中的上一个对话</translation>
    </message>
    <message>
        <source>Open the first to ninth chat in the list</source>
        <translation>打开列表中的第 1 至第 9 个对话</translation>
    </message>
    <message>
        <source>Regenerate the last reply</source>
        <translation>重新生成最后一条回复</translation>
    </message>
    <message>
        <source>Attach files</source>
        <translation>添加附件</translation>
    </message>
    <message>
        <source>Previous version of a message (‹)</source>
        <translation>消息的上一版（‹）</translation>
    </message>
    <message>
        <source>the selected message, else the newest one with versions</source>
        <translation>所选消息；未选时为最新的有多个版本的消息</translation>
    </message>
    <message>
        <source>Next version of a message (›)</source>
        <translation>消息的下一版（›）</translation>
    </message>
    <message>
        <source>Expand or collapse a tool block</source>
        <translation>展开或折叠工具块</translation>
    </message>
    <message>
        <source>on a tool block in the chat: Tab to the chat, then ↑ ↓</source>
        <translation>在对话中的工具块上：按 Tab 切到对话，再用 ↑ ↓</translation>
    </message>
    <message>
        <source>Show or hide the chats</source>
        <translation>显示或隐藏对话列表</translation>
    </message>
    <message>
        <source>Allow the tool call once</source>
        <translation>允许这次工具调用</translation>
    </message>
    <message>
        <source>while a tool asks for permission</source>
        <translation>在工具请求许可时</translation>
    </message>
    <message>
        <source>Allow the tool for this chat</source>
        <translation>在此对话中允许该工具</translation>
    </message>
    <message>
        <source>Deny the tool call</source>
        <translation>拒绝这次工具调用</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>按键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>New chat</source>
        <translation>新建对话</translation>
    </message>
    <message>
        <source>New project…</source>
        <translation>新建项目…</translation>
    </message>
    <message>
        <source>New project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <source>Filter by title</source>
        <translation>按标题筛选</translation>
    </message>
    <message>
        <source>Chats</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>F2 renames the open chat (anywhere in the window); Delete on this list deletes the selected one</source>
        <translation>F2 重命名当前对话（窗口内任意位置）；在此列表中按 Delete 删除所选对话</translation>
    </message>
    <message>
        <source>Filter chats by title</source>
        <translation>按标题筛选对话</translation>
    </message>
    <message>
        <source>Projects</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
    <message numerus="yes">
        <source>%n message(s)</source>
        <translation>
            <numerusform>%n 条消息</numerusform>
        </translation>
    </message>
    <message>
        <source>New chat in “{name}”</source>
        <translation>在“{name}”中新建对话</translation>
    </message>
    <message>
        <source>Project menu</source>
        <translation>项目菜单</translation>
    </message>
    <message numerus="yes">
        <source>%n chat(s)</source>
        <translation>
            <numerusform>%n 个对话</numerusform>
        </translation>
    </message>
    <message>
        <source>New chat in this project</source>
        <translation>在此项目中新建对话</translation>
    </message>
    <message>
        <source>Project settings…</source>
        <translation>项目设置…</translation>
    </message>
    <message>
        <source>Expand</source>
        <translation>展开</translation>
    </message>
    <message>
        <source>Collapse</source>
        <translation>折叠</translation>
    </message>
    <message>
        <source>Delete project…</source>
        <translation>删除项目…</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>取消置顶</translation>
    </message>
    <message>
        <source>Pin</source>
        <translation>置顶</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Move to project</source>
        <translation>移至项目</translation>
    </message>
    <message>
        <source>No project</source>
        <translation>不属于项目</translation>
    </message>
    <message>
        <source>Rename chat</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <source>Delete chat</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <source>Delete “{title}” and all its messages? This cannot be undone.</source>
        <translation>删除“{title}”及其所有消息？此操作无法撤销。</translation>
    </message>
</context>
<context>
    <name>SlashCommands</name>
    <message>
        <source>The commands and keyboard shortcuts</source>
        <translation>命令和键盘快捷键</translation>
    </message>
    <message>
        <source>Clear this chat&apos;s history (asks first)</source>
        <translation>清空此对话的历史（会先确认）</translation>
    </message>
    <message>
        <source>Change this chat&apos;s model</source>
        <translation>更换此对话的模型</translation>
    </message>
    <message>
        <source>Summarise the older part now</source>
        <translation>立即摘要较早的部分</translation>
    </message>
    <message>
        <source>What fills the context window</source>
        <translation>上下文窗口被什么占用</translation>
    </message>
</context>
<context>
    <name>SummaryEditor</name>
    <message>
        <source>Edit summary</source>
        <translation>编辑摘要</translation>
    </message>
    <message>
        <source>The model reads this instead of the messages it covers. Keep the headings; your text becomes a new summary, and Undo on the card restores this one.</source>
        <translation>模型会读取这段摘要来代替它涵盖的消息。请保留各个标题；你的文字会成为新的摘要，卡片上的“撤销”可恢复当前这份。</translation>
    </message>
</context>
<context>
    <name>ThinkingToggle</name>
    <message>
        <source>Thinking</source>
        <translation>思考</translation>
    </message>
    <message>
        <source>Extended thinking for this chat</source>
        <translation>此对话的扩展思考</translation>
    </message>
    <message>
        <source>The model thinks before it answers (budget %1 tokens, in Settings)</source>
        <translation>模型会先思考再回答（预算 %1 词元，可在设置中修改）</translation>
    </message>
    <message>
        <source>This chat&apos;s model does not offer extended thinking</source>
        <translation>此对话的模型不支持扩展思考</translation>
    </message>
</context>
<context>
    <name>ThresholdFields</name>
    <message>
        <source>default ({n} %)</source>
        <translation>默认（{n} %）</translation>
    </message>
    <message>
        <source>Percent of the input room (the context window less the output reserve) at which the older part of the chat is summarised; the chat&apos;s hover card shows the same figure</source>
        <translation>达到输入空间（上下文窗口减去输出预留）的这个百分比时，摘要对话中较早的部分；对话的悬停卡片显示同一数值</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 词元</translation>
    </message>
    <message>
        <source>no cap</source>
        <translation>不设上限</translation>
    </message>
    <message>
        <source>Summarise at this many tokens at the latest, whatever the window (useful for 1M-token windows: every turn rereads what the context holds)</source>
        <translation>无论窗口多大，最迟在达到这么多词元时摘要（适合百万词元的窗口：每一轮都会重新读取上下文中的全部内容）</translation>
    </message>
    <message>
        <source>at most</source>
        <translation>最多</translation>
    </message>
</context>
<context>
    <name>ToolsUi</name>
    <message>
        <source>&amp;MCP servers and tool permissions…</source>
        <translation>MCP 服务器与工具权限(&amp;M)…</translation>
    </message>
    <message>
        <source>Workspace folder</source>
        <translation>工作区文件夹</translation>
    </message>
    <message>
        <source>“{title}” is waiting for your answer: may {tool} run? Open that chat to answer.</source>
        <translation>“{title}”在等你回答：是否允许运行 {tool}？打开那个对话即可回答。</translation>
    </message>
</context>
<context>
    <name>WelcomePage</name>
    <message>
        <source>&lt;h2&gt;Welcome to Précis&lt;/h2&gt;</source>
        <translation>&lt;h2&gt;欢迎使用 Précis&lt;/h2&gt;</translation>
    </message>
    <message>
        <source>Précis talks to Claude through the Anthropic API or any Anthropic-compatible provider.&lt;br&gt;1. Paste an API key (from console.anthropic.com, or your provider).&lt;br&gt;2. Pick your provider&apos;s profile (Anthropic, OpenRouter, DeepSeek, a local server…); Test connection checks it.&lt;br&gt;3. Pick a model. You can change all of this later in Settings.</source>
        <translation>Précis 通过 Anthropic API 或任何兼容 Anthropic 的服务商与 Claude 对话。&lt;br&gt;1. 粘贴 API 密钥（来自 console.anthropic.com 或你的服务商）。&lt;br&gt;2. 选择服务商配置（Anthropic、OpenRouter、DeepSeek、本地服务器…）；“测试连接”可检查是否可用。&lt;br&gt;3. 选择模型。这些都可以稍后在设置中修改。</translation>
    </message>
    <message>
        <source>Start chatting</source>
        <translation>开始对话</translation>
    </message>
</context>
<context>
    <name>WindowLook</name>
    <message>
        <source>Show or hide the chats (Ctrl+B)</source>
        <translation>显示或隐藏对话列表（Ctrl+B）</translation>
    </message>
    <message>
        <source>Show the chats</source>
        <translation>显示对话列表</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Show &amp;chats</source>
        <translation>显示对话列表(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Wide reading column</source>
        <translation>宽阅读栏(&amp;W)</translation>
    </message>
    <message>
        <source>Messages and the composer use the window&apos;s width instead of a centred column</source>
        <translation>消息和输入框使用整个窗口宽度，而不是居中的栏</translation>
    </message>
    <message>
        <source>&amp;Theme</source>
        <translation>主题(&amp;T)</translation>
    </message>
    <message>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>Hide the chats</source>
        <translation>隐藏对话列表</translation>
    </message>
</context>
<context>
    <name>WorkspaceButton</name>
    <message>
        <source>Choose workspace folder…</source>
        <translation>选择工作区文件夹…</translation>
    </message>
    <message>
        <source>No workspace (no built-in tools)</source>
        <translation>不使用工作区（无内置工具）</translation>
    </message>
    <message>
        <source>Workspace: {name}</source>
        <translation>工作区：{name}</translation>
    </message>
    <message>
        <source>No workspace</source>
        <translation>无工作区</translation>
    </message>
    <message>
        <source>Pick a folder so the model can read, search, edit and run commands in it (each call asks first).</source>
        <translation>选择一个文件夹，模型就能在其中读取、搜索、编辑和运行命令（每次调用前都会先征求许可）。</translation>
    </message>
</context>
</TS>
