"""Reviews deckgen was not tuned on: other repositories, other writing styles, every form of issue #3.

Each entry lists decisions a careful reader would expect; the test fails when one is not found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deckgen.cards.cards import make_cards
from deckgen.cards.gate import REJECT, anki_cards, review_card
from deckgen.extract.extract import extract_review
from deckgen.source.parse import parse_corpus
from deckgen.text.segment import get_segmenter
from deckgen.types import Relation, norm

HELDOUT = Path(__file__).parent / "fixtures" / "heldout"

# summary prefix → facts (relation, X, Y) that must be found; "*" in Y matches anything.
EXPECTED: dict[str, list[tuple[str, str, str]]] = {
    "为查询计划器增加统计信息缓存": [  # 1) 2) 3)
        ("contrast", "LRU", "全局字典缓存统计信息"),
        ("avoid", "以 TTL 控制过期", "读到陈旧统计"),
        ("result", "在计划阶段预取直方图", "估算稳定"),
    ],
    "拆分存储层的读写路径": [  # （1）（2）
        ("avoid", "读路径改用无锁快照", "读写互相阻塞"),
        ("means", "批量提交", "实现吞吐提升"),
    ],
    "为 RPC 框架引入超时预算传递": [  # 1、2、
        ("result", "服务端读取预算后提前放弃注定超时的请求", "尾延迟可控"),
    ],
    "重写日志采样策略": [  # **名称**：说明 in prose, 而非, 为了 after its clause
        ("definition", "分层采样", "对错误日志全量保留"),
        ("contrast", "对错误日志全量保留", "统一按比例采样"),
        ("definition", "动态阈值", "依据流量自动调整采样率"),
        ("purpose", "依据流量自动调整采样率", "在高峰期保护磁盘带宽"),
    ],
    "把索引构建改为后台任务": [  # 「」 quoted, 而不是, 首先…其次…最后
        ("contrast", "增量构建", "全量重建"),
        ("term", "记录变更集", "*"), ("term", "按批次合并到索引", "*"), ("term", "原子地切换到新索引", "*"),
    ],
    "引入连接池健康检查": [  # 第一，第二，
        ("purpose", "空闲连接定期发送心跳", "尽早发现断开的连接"),
        ("means", "`PoolGuard`", "实现连接的自动归还"),
    ],
    "优化调度器的公平性": [  # 用 X 取代 Y，目的是防止 Z
        ("contrast", "加权轮询", "严格优先级"),
        ("avoid", "用加权轮询取代了严格优先级", "低优先级任务饿死"),
    ],
    "kubelet 在节点内存压力下优先驱逐低优先级 Pod": [  # 第一；第二；第三 with 而非/使/通过…确保
        ("contrast", "驱逐顺序综合考虑 QoS 等级和 Pod 优先级", "只看内存用量"),
        ("result", "引入“软阈值 + 宽限期”机制", "短暂的内存尖峰不会立即触发驱逐"),
        ("means", "`EvictionManager`", "统一入口执行驱逐"),
        ("result", "通过 `EvictionManager` 统一入口执行驱逐", "日志与事件的格式一致"),
    ],
    "为 CSI 卷挂载增加超时重试": [  # 用 X 替代了 Y，以免 Z
        ("contrast", "指数退避", "固定间隔重试"),
        ("avoid", "用指数退避替代了固定间隔重试", "在存储后端故障时放大请求风暴"),
    ],
    "为 torch.compile 的 AOTAutograd 缓存加入版本号校验": [  # markdown bullets, 而不是, 从而避免了
        ("contrast", "在缓存键里带上编译器版本号", "依赖文件修改时间判断是否过期"),
        ("avoid", "版本不一致时直接丢弃缓存并打日志", "加载旧格式导致的段错误"),
        ("term", "`TORCHINDUCTOR_CACHE_STRICT`", "*"),
    ],
    "重构 DataLoader 的 worker 启动逻辑": [  # 以 X 取代了 Y，为了 Y，X；由于…保证
        ("contrast", "惰性初始化", "启动时一次性拉起全部 worker"),
        ("purpose", "worker 在第一次被调度时才 fork", "降低首个 batch 的延迟"),
        ("result", "在 `_MultiProcessingDataLoaderIter` 里加了一把锁", "worker 索引分配的原子性"),
    ],
    "cargo 构建脚本输出改为结构化 JSON": [  # 1. 2. 3. on their own lines, 便于
        ("purpose", "每行一个事件", "流式解析"),
        ("result", "新格式需要通过 `--message-format=json` 显式开启", "现有脚本不受影响"),
        ("term", "`cargo-util-schemas`", "*"),
    ],
    "ORM 的 QuerySet.iterator() 在 PostgreSQL 上默认使用服务端游标": [  # (1) (2) (3) inline, 时
        ("avoid", "使用服务端游标按块拉取数据", "一次性把整个结果集加载进内存"),
        ("condition", "在事务外调用时", "自动回退到客户端游标"),
    ],
    "为 Parquet 读取器引入页级谓词下推": [  # 不再…而是, 利用 X 来, 由于…所以, 把…下沉到
        ("contrast", "先读取页统计信息判断是否可以跳过", "整页解码"),
        ("means", "`PageIndex`", "来定位候选页"),
        ("cause", "统计信息可能缺失", "缺失时会回退到原来的整页解码路径"),
        ("action", "过滤逻辑", "下沉到 `ColumnReader` 中"),
        ("tradeoff", "这样做", "减少了大量无用的解压开销"),
        ("tradeoff", "这样做", "元数据读取多了一次 I/O"),
    ],
    "统一 C++ 与 Python 的内存池配置入口": [  # 引入 X 来 Y, 把 A 集中到 B
        ("means", "builder 模式", "来构造配置"),
        ("action", "分散在各处的环境变量读取", "集中到 `MemoryPoolConfig`"),
    ],
    "给 Flight RPC 增加 TLS 双向认证": [  # 亮点是 NAME：…, 无需, 改用 X 代替 Y, 需要注意…以保持
        ("definition", "证书轮换", "服务端监听证书文件变化并热加载"),
        ("result", "服务端监听证书文件变化并热加载", "无需重启进程"),
        ("contrast", "`grpc::SslCredentials`", "自定义握手"),
        ("purpose", "默认仍然关闭双向认证", "保持与旧客户端兼容"),
    ],
    "告警规则评估改为分片执行": [  # X，因为 Y；这样能…避免；通过 X 配置；用于
        ("cause", "保证同一条规则总是落在同一个实例上", "按规则 UID 的哈希分片"),
        ("means", "`alerting.shards`", "配置"),
        ("purpose", "引入了一致性哈希环", "在扩缩容时只迁移少量规则"),
    ],
    "面板查询结果缓存改用 Redis": [  # 把 A 换成了 B，这样 Y
        ("contrast", "Redis", "进程内缓存"),
        ("result", "把进程内缓存换成了 Redis", "多个实例可以共享缓存命中"),
    ],
    "修复时区转换导致的图表错位": [("contrast", "`time.UTC`", "`time.Local`")],
    "为插件 SDK 增加版本协商": [  # NAME：说明；若 X 则 Y；这样做可以让 Z (antecedent in the previous sentence)
        ("definition", "`Negotiate` 握手", "宿主声明支持的协议版本区间"),
        ("condition", "若区间无交集", "直接拒绝加载并给出可读的错误信息"),
        ("result", "`Negotiate` 握手", "旧插件在新宿主上继续运行"),
    ],
}

VERDICTS = {"为 Parquet 读取器引入页级谓词下推": "deep", "统一 C++ 与 Python 的内存池配置入口": "skim",
            "给 Flight RPC 增加 TLS 双向认证": "deep", "为 CSI 卷挂载增加超时重试": "skip",
            "重构 DataLoader 的 worker 启动逻辑": "skim"}


@pytest.mark.parametrize("prefix", sorted(VERDICTS))
def test_verdicts_in_other_wordings(reviews, prefix: str) -> None:  # type: ignore[no-untyped-def]
    """必读 / 了解即可 / 推荐细读 / 不值得精读; 判断是否可以跳过 (about data, not reading) is no verdict."""
    assert _review_for(reviews, prefix).verdict.value == VERDICTS[prefix]


@pytest.fixture(scope="module", name="reviews")
def _reviews() -> dict:  # type: ignore[type-arg]
    seg = get_segmenter()
    return {entry.title: extract_review(entry, seg) for entry in parse_corpus([HELDOUT])}


def _review_for(reviews, prefix: str):  # type: ignore[no-untyped-def]
    matches = [r for title, r in reviews.items() if title.startswith(prefix)]
    assert len(matches) == 1, prefix
    return matches[0]


@pytest.mark.parametrize("prefix", sorted(EXPECTED))
def test_expected_decisions_found(reviews, prefix: str) -> None:  # type: ignore[no-untyped-def]
    found = {(f.relation.value, f.subject, f.detail) for f in _review_for(reviews, prefix).facts}
    # What a named decision does may run on into its next clause ("…热加载，无需重启进程"): its first clause must match.
    missing = [e for e in EXPECTED[prefix]
               if not any(f[0] == e[0] and f[1] == e[1] and (e[2] == "*" or f[2] == e[2]
                                                             or (e[0] == "definition" and f[2].startswith(e[2] + "，")))
                          for f in found)]
    assert missing == []


def test_every_heldout_entry_is_covered(reviews) -> None:  # type: ignore[no-untyped-def]
    assert sorted(reviews) == sorted(t for t in reviews if any(t.startswith(p) for p in EXPECTED))


def test_heldout_cards_pass_the_gate_and_never_repeat(reviews) -> None:  # type: ignore[no-untyped-def]
    seg = get_segmenter()
    counts = []
    for review in reviews.values():
        cards = make_cards(review, seg)
        counts.append(sum(anki_cards(c) for c in cards))
        assert cards, review.entry.title
        assert all(f.severity != REJECT for c in cards for f in review_card(c, seg))
        questions = [norm(c.prompt) for c in cards]
        assert len(questions) == len(set(questions))
        assert all(c.relation in Relation for c in cards)
    # No minimum and a cap: every review names a decision, so each gets a card, and none more than eight.
    assert all(1 <= n <= 8 for n in counts), counts
